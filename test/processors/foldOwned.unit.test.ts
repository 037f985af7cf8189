import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkpointOf, foldTrials, foldTrialsOwned, type RowTable } from '../../processors/folds/rowTable.ts';
import { addAttemptInPlace, attemptOrder, type AttemptRecord } from '../../processors/core/rowState.ts';
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

/** The core's de-duplication and order rule, by brute force: the first event of each slot, sorted. */
describe('addAttemptInPlace', () => {
  it('keeps the first event to arrive per (run, attempt) slot, in attemptOrder', () => {
    const rec = fc.record({
      event_id: fc.constantFrom('A1', 'A2', 'B1', 'B2', 'C1', 'C2', 'D1'),
      run_id: fc.constantFrom('r1', 'r2'),
      attempt: fc.nat({ max: 2 }),
      occurred_at: fc.nat({ max: 4 }),
    });
    fc.assert(
      fc.property(fc.array(rec, { maxLength: 30 }), (arrivals) => {
        // one event per id (a redelivery is the same event): the first arrival of each id stands for it
        const byId = new Map<string, (typeof arrivals)[number]>();
        for (const a of arrivals) if (!byId.has(a.event_id)) byId.set(a.event_id, a);
        const events = arrivals.map((a) => byId.get(a.event_id)!);
        const attempts: AttemptRecord[] = [];
        for (const e of events) addAttemptInPlace(attempts, attempt(e), attemptOrder);
        const slots = new Map<string, AttemptRecord>();
        for (const e of events) {
          const k = `${e.run_id}/${e.attempt}`;
          if (!slots.has(k)) slots.set(k, attempt(e));
        }
        expect(attempts).toEqual([...slots.values()].sort(attemptOrder));
      }),
      { numRuns: 500 },
    );
  });
});

const attempt = (e: { event_id: string; run_id: string; attempt: number; occurred_at: number }): AttemptRecord => ({
  ...e,
  passed: true,
  output_hash: null,
  checks: [],
  forbidden_actions: [],
});
