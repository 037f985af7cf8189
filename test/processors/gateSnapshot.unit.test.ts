import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyPrefix,
  keepLatest,
  restorePrefix,
  toGateBookSnapshot,
  usableSnapshot,
  type DecisionsPrefix,
} from '../../processors/folds/gateSnapshot.ts';
import type { DecisionEvent } from '../../processors/folds/gates.ts';
import type { GateBookSnapshot } from '../../schemas/events/index.ts';
import { gateBookKey, keyOf, topicOf, TOPICS } from '../../schemas/topics.ts';
import { decisionEvents, foldBatched, throughTheLog, type Rec } from '../helpers/decisionStream.ts';

/**
 * Issue 26, item 6: a restore takes a partition's latest snapshot (its book and closed runs at an offset) and folds
 * the records after it, instead of the partition from offset 0. Over random streams (comparisons declared, confirmed,
 * decided, redelivered, out of order; closed runs; alerts; adaptive rounds), random batchings and random snapshot
 * points, with the snapshot passed through its schema as the log passes it, and the consumer's redelivery from a
 * commit before the snapshot: the restored prefix is the full replay's, book and closed runs alike.
 */
const T = Date.UTC(2026, 0, 1);
/** The events of comparison k (candidate `cand{k%3}`), in the order a partition would see them. */
const universe = (k: number): DecisionEvent[] => decisionEvents(k, T, 2);

const content = (s: DecisionsPrefix) => ({
  book: s.book,
  closed: [...s.closed.values()].sort((a, b) => a.event_id.localeCompare(b.event_id)),
  through: s.through,
});

describe('a gate book snapshot', () => {
  it('restores with the records after it to the full replay, whatever the stream, batches and snapshot point', () => {
    // a step: take comparison k's next event, or redeliver one already in the partition
    const step = fc.tuple(fc.nat(4), fc.boolean(), fc.nat(1_000));
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 90 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        fc.nat(1_000),
        fc.nat(1_000),
        fc.boolean(),
        (steps, before, after, cut, commit, outOfOrder) => {
          const next = [0, 0, 0, 0, 0];
          const stream: DecisionEvent[] = [];
          for (const [k, again, j] of steps) {
            if (again && stream.length > 0) stream.push(stream[j % stream.length]!);
            else if (next[k]! < 6) stream.push(universe(k)[next[k]!++]!);
            // some requests and verdicts before their declaration: the fold ignores or keeps them as a replay does
            else if (outOfOrder) stream.push(universe((k + 1) % 5)[(j % 5) + 1]!);
          }
          const records: Rec[] = stream.map((event, offset) => ({ offset, event }));
          const full = foldBatched(emptyPrefix(), records, [records.length]);

          const at = cut % (records.length + 1);
          const prefix = foldBatched(emptyPrefix(), records.slice(0, at), before);
          const snapshot = throughTheLog(toGateBookSnapshot(prefix, 2, 4, 'test'));
          expect(snapshot.through_offset).toBe(at);
          const restored = restorePrefix(snapshot);
          foldBatched(restored, records.slice(at), after);
          expect(content(restored)).toEqual(content(full));

          // the consumer then delivers again from its committed offset, which may lie before the snapshot's
          const from = commit % (records.length + 1);
          foldBatched(restored, records.slice(from), after);
          expect(content(restored)).toEqual(content(full));
          // the snapshot was a copy: folding on did not change what was published
          expect(throughTheLog(snapshot)).toEqual(snapshot);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('is one compacted record per partition of passk.decisions, the latest kept', () => {
    const s = foldBatched(
      emptyPrefix(),
      universe(0).map((event, offset) => ({ offset, event })),
      [2],
    );
    const a = toGateBookSnapshot(s, 3, 4, 'test');
    expect(topicOf(a)).toBe(TOPICS.rowstate);
    expect(keyOf(a)).toBe(gateBookKey(3));
    const later = { ...a, through_offset: a.through_offset + 5 };
    const latest = new Map<number, GateBookSnapshot>();
    for (const x of [a, later, a]) keepLatest(latest, x);
    expect(latest.get(3)).toBe(later);
  });

  it('is not used for another partition count, nor past the end of the partition', () => {
    const s = foldBatched(
      emptyPrefix(),
      universe(1).map((event, offset) => ({ offset, event })),
      [6],
    );
    const x = toGateBookSnapshot(s, 0, 4, 'test');
    expect(usableSnapshot(x, 4, 6)).toBe(x);
    expect(usableSnapshot(x, 4, 10)).toBe(x);
    expect(usableSnapshot(x, 8, 6)).toBeUndefined();
    expect(usableSnapshot(x, 4, 5)).toBeUndefined(); // a re-created, shorter log: replayed from 0
    expect(restorePrefix(undefined)).toEqual(emptyPrefix());
  });
});
