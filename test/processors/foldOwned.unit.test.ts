import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkpointOf, foldTrials, foldTrialsOwned, type RowTable } from '../../processors/folds/rowTable.ts';
import { arbTrialStream } from '../helpers/processorFixtures.ts';

/** The topology's in-place fold against the immutable reference fold, over the same batches. */
describe('foldTrialsOwned', () => {
  it('gives the reference fold’s changes, tallies and final table, batch by batch, and never changes what it emitted', () => {
    fc.assert(
      fc.property(arbTrialStream, fc.array(fc.nat({ max: 20 }), { maxLength: 8 }), ({ stream }, cuts) => {
        const reference: RowTable = new Map();
        const owned: RowTable = new Map();
        const emitted: { change: unknown; bytes: string }[] = [];
        let from = 0;
        for (const size of [...cuts, stream.length]) {
          const batch = stream.slice(from, from + size + 1);
          from += batch.length;
          const want = foldTrials(reference, batch);
          const got = foldTrialsOwned(owned, batch);
          expect(got.map((c) => c.key)).toEqual(want.map((c) => c.key));
          expect(got.map((c) => JSON.stringify(c.after))).toEqual(want.map((c) => JSON.stringify(c.after)));
          expect(
            got.map((c) => c.before && { n: c.before.n, c: c.before.c, u: c.before.ungraded, k: c.before.class }),
          ).toEqual(
            want.map((c) => c.before && { n: c.before.n, c: c.before.c, u: c.before.ungraded, k: c.before.class }),
          );
          for (const c of got) emitted.push({ change: c.after, bytes: JSON.stringify(c.after) });
          if (from >= stream.length) break;
        }
        expect(JSON.stringify(checkpointOf(owned))).toBe(JSON.stringify(checkpointOf(reference)));
        for (const e of emitted) expect(JSON.stringify(e.change)).toBe(e.bytes); // copies, untouched by later batches
      }),
      { numRuns: 300 },
    );
  });
});
