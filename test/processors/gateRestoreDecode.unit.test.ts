import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastJsonCodec, validateDecoded } from '../../log/fastValidate.ts';
import { cloneBook, emptyPrefix, restorePrefix, toGateBookSnapshot } from '../../processors/folds/gateSnapshot.ts';
import type { DecisionEvent } from '../../processors/folds/gates.ts';
import { jsonCodec, validateEvent } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import type { GateBookSnapshot } from '../../schemas/events/index.ts';
import { candidateKey } from '../../schemas/topics.ts';
import { decisionEvents, prefixContent, foldBatched, type Rec } from '../helpers/decisionStream.ts';

/**
 * Issue 26, item 6: a gates restore decodes each partition's snapshot with the log's codec (`validateDecoded`, both
 * backends) and copies its book (`cloneBook`). Every snapshot holds passk's keys (`suite␟version`), whose separator
 * JSON escapes (`\u001f`), and that escape sent every snapshot down zod's slow path; the book was copied by
 * `structuredClone`. Neither may change what a restore gives: the restored prefix, folded on, is the full replay's.
 */
const T = Date.UTC(2026, 0, 1);
const universe = (k: number): DecisionEvent[] => decisionEvents(k, T, 2);
const bytesOf = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const noSlowPath = (): never => {
  throw new Error('the slow path (zod) was taken');
};

describe('a gate book snapshot decoded as the logs decode it', () => {
  it('restores, with the records after it, to the full replay: decoded by the log codec as by zod', async () => {
    const step = fc.tuple(fc.nat(4), fc.boolean(), fc.nat(1_000));
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 90 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        fc.nat(1_000),
        fc.boolean(), // forget decided ids (the embedded log) or keep them (Kafka)
        fc.constantFrom(0, 1, 1_000), // the ids horizon, where ids are kept
        async (steps, batches, cut, forget, idH) => {
          const next = [0, 0, 0, 0, 0];
          const stream: DecisionEvent[] = [];
          for (const [k, again, j] of steps) {
            if (again && stream.length > 0) stream.push(stream[j % stream.length]!);
            else if (next[k]! < 6) stream.push(universe(k)[next[k]!++]!);
          }
          const records: Rec[] = stream.map((event, offset) => ({ offset, event }));
          const full = foldBatched(emptyPrefix(0, forget, idH), records, [records.length]);
          const at = cut % (records.length + 1);
          const prefix = foldBatched(emptyPrefix(0, forget, idH), records.slice(0, at), batches);
          const bytes = bytesOf(toGateBookSnapshot(prefix, 1, 4, 'test'));
          const fast = (await fastJsonCodec.decode(bytes)) as GateBookSnapshot;
          expect(fast).toEqual(await jsonCodec.decode(bytes));
          const restored = restorePrefix(fast, 0, forget, idH);
          foldBatched(restored, records.slice(at), batches);
          expect(prefixContent(restored)).toEqual(prefixContent(full));
          // the restore copied the book: folding on left the decoded snapshot as it was read
          expect(fast).toEqual(await jsonCodec.decode(bytes));
        },
      ),
      { numRuns: 300 },
    );
  }, 60_000);

  it('takes the fast path for a snapshot holding keys (their separator escaped), as for any other record', () => {
    const prefix = emptyPrefix(0, false, 7 * 86_400_000);
    foldBatched(
      prefix,
      [0, 1, 2].flatMap((k) => universe(k)).map((event, offset) => ({ offset, event })),
      [100],
    );
    const snapshot = toGateBookSnapshot(prefix, 0, 1, 'test');
    const text = JSON.stringify(snapshot);
    expect(text).toContain('\\u001f');
    expect(Object.keys(snapshot.book.verdicts)).toContain(candidateKey('refunds', 'cand0'));
    // fails on the code before: any `\u` escape sent the record to zod
    expect(validateDecoded(JSON.parse(text), text, noSlowPath)).toEqual(validateEvent(JSON.parse(text)));
  });

  it('takes the fast path for a shallow record with many objects and arrays; refuses deep ones and lone surrogates', () => {
    const verdicts = Object.fromEntries(
      Array.from({ length: 80 }, (_, i) => [candidateKey('s', `v${i}`), ['01JAAAAAAAAAAAAAAAAAAAAAAA']]),
    );
    const wide = {
      ...JSON.parse(JSON.stringify(toGateBookSnapshot(emptyPrefix(), 0, 1, 'test'))),
      book: { comparisons: {}, verdicts, alerts: {} },
    };
    const text = JSON.stringify(wide);
    expect(validateDecoded(JSON.parse(text), text, noSlowPath)).toEqual(validateEvent(JSON.parse(text)));

    const surrogate = JSON.stringify({ ...wide, producer: 'x' }).replace('"producer":"x"', '"producer":"\\ud800"');
    expect(() => validateDecoded(JSON.parse(surrogate), surrogate, noSlowPath)).toThrow('slow path');
    expect(() => fastJsonCodec.decodeNow!(new TextEncoder().encode(surrogate))).toThrow(InvalidEvent);

    let deep: unknown = [];
    for (let i = 0; i < 70; i++) deep = [deep];
    const tooDeep = JSON.stringify({ ...wide, producer: deep });
    expect(() => validateDecoded(JSON.parse(tooDeep), tooDeep, noSlowPath)).toThrow('slow path');
    expect(() => fastJsonCodec.decodeNow!(new TextEncoder().encode(tooDeep))).toThrow(/deeper than/);
  });

  it('cloneBook copies a book as structuredClone does, sharing nothing', () => {
    const prefix = emptyPrefix(0, false, 1_000);
    foldBatched(
      prefix,
      [0, 1, 2, 3].flatMap((k) => universe(k)).map((event, offset) => ({ offset, event })),
      [3],
    );
    const book = prefix.book;
    const copy = cloneBook(book);
    expect(copy).toEqual(structuredClone(book));
    expect(Object.keys(copy)).toEqual(Object.keys(book));
    const seen = new Set<unknown>();
    const walk = (v: unknown) => {
      if (typeof v !== 'object' || v === null) return;
      seen.add(v);
      for (const x of Object.values(v)) walk(x);
    };
    walk(book);
    const shared: unknown[] = [];
    const check = (v: unknown) => {
      if (typeof v !== 'object' || v === null) return;
      if (seen.has(v)) shared.push(v);
      for (const x of Object.values(v)) check(x);
    };
    check(copy);
    expect(shared).toEqual([]);
  });
});
