import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyPrefix,
  keepLatest,
  prunePrefix,
  restorePrefix,
  toGateBookSnapshot,
  usableSnapshot,
  type DecisionsPrefix,
} from '../../processors/folds/gateSnapshot.ts';
import type { DecisionEvent } from '../../processors/folds/gates.ts';
import type { GateBookSnapshot } from '../../schemas/events/index.ts';
import { gateBookKey, keyOf, topicOf, TOPICS } from '../../schemas/topics.ts';
import {
  batchesAndPoints,
  decisionEvents,
  prefixContent,
  foldBatched,
  throughTheLog,
  type Rec,
} from '../helpers/decisionStream.ts';

/**
 * Issue 26, item 6: a restore takes a partition's latest snapshot (its book and closed runs at an offset) and folds
 * the records after it, instead of the partition from offset 0. Over random streams (comparisons declared, confirmed,
 * decided, redelivered, out of order; closed runs; alerts; adaptive rounds), random batchings and random snapshot
 * points, with the snapshot passed through its schema as the log passes it, and the consumer's redelivery from a
 * commit before the snapshot: the restored prefix is the full replay's, book and closed runs alike; under the alerts
 * horizon too, with alerts spread over weeks.
 */
const T = Date.UTC(2026, 0, 1);
/** The events of comparison k (candidate `cand{k%3}`), in the order a partition would see them. */
const universe = (k: number): DecisionEvent[] => decisionEvents(k, T, 2);

describe('a gate book snapshot', () => {
  it('restores with the records after it to the full replay, whatever the stream, batches and snapshot point', () => {
    // a step: take comparison k's next event, or redeliver one already in the partition
    const step = fc.tuple(fc.nat(4), fc.boolean(), fc.nat(1_000));
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 90 }),
        ...batchesAndPoints,
        fc.boolean(),
        fc.boolean(), // the book forgets decided ids (the embedded log's gates look them up in the log)
        (steps, before, after, cut, commit, outOfOrder, forget) => {
          const next = [0, 0, 0, 0, 0];
          const stream: DecisionEvent[] = [];
          for (const [k, again, j] of steps) {
            if (again && stream.length > 0) stream.push(stream[j % stream.length]!);
            else if (next[k]! < 6) stream.push(universe(k)[next[k]!++]!);
            // some requests and verdicts before their declaration: the fold ignores or keeps them as a replay does
            else if (outOfOrder) stream.push(universe((k + 1) % 5)[(j % 5) + 1]!);
          }
          const records: Rec[] = stream.map((event, offset) => ({ offset, event }));
          const full = foldBatched(emptyPrefix(0, forget), records, [records.length]);

          const at = cut % (records.length + 1);
          const prefix = foldBatched(emptyPrefix(0, forget), records.slice(0, at), before);
          const snapshot = throughTheLog(toGateBookSnapshot(prefix, 2, 4, 'test'));
          expect(snapshot.through_offset).toBe(at);
          const restored = restorePrefix(snapshot, 0, forget);
          foldBatched(restored, records.slice(at), after);
          expect(prefixContent(restored)).toEqual(prefixContent(full));

          // the consumer then delivers again from its committed offset, which may lie before the snapshot's
          const from = commit % (records.length + 1);
          foldBatched(restored, records.slice(from), after);
          expect(prefixContent(restored)).toEqual(prefixContent(full));
          // the snapshot was a copy: folding on did not change what was published
          expect(throughTheLog(snapshot)).toEqual(snapshot);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('under the alerts horizon, restores a pruned snapshot with the records after it to the full replay', () => {
    const DAY = 86_400_000;
    const H = 7 * DAY;
    // a step: an alert for window `w` (its end w hours after T, so up to ~40 days), new or re-delivered, or a
    // comparison's next event; the windows come roughly in order, as they close, some late
    const step = fc.tuple(fc.nat(999), fc.nat(3), fc.nat(4), fc.nat(1_000));
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 120 }),
        ...batchesAndPoints,
        fc.boolean(), // the embedded log's gates (decided ids looked up in the log) or Kafka's (ids horizon)
        (steps, before, after, cut, commit, forget) => {
          const next = [0, 0, 0, 0, 0];
          const stream: DecisionEvent[] = [];
          let hour = 0;
          for (const [w, kind, k, j] of steps) {
            if (kind === 0 && stream.length > 0) stream.push(stream[j % stream.length]!);
            else if (kind === 1 && next[k]! < 6) stream.push(universe(k)[next[k]!++]!);
            else {
              hour += w % 24; // time moves on by up to a day; the window is this hour's or (one in ten) older
              const end = T + (w % 10 === 0 ? Math.max(0, hour - (j % 400)) : hour) * 3_600_000;
              stream.push({
                event_id: `alert-${end}`,
                type: 'WindowAlertRaised',
                occurred_at: end,
                alert_id: `alert-${end}`,
              } as unknown as DecisionEvent);
            }
          }
          const records: Rec[] = stream.map((event, offset) => ({ offset, event }));
          const pruned = (x: DecisionsPrefix) => {
            prunePrefix(x);
            return prefixContent(x);
          };
          const full = foldBatched(emptyPrefix(0, forget, H), records, [records.length]);
          const at = cut % (records.length + 1);
          const snapshot = throughTheLog(
            toGateBookSnapshot(foldBatched(emptyPrefix(0, forget, H), records.slice(0, at), before), 2, 4, 'test'),
          );
          expect(usableSnapshot(snapshot, 4, at, 0, forget, H)).toBe(snapshot);
          const restored = restorePrefix(snapshot, 0, forget, H);
          foldBatched(restored, records.slice(at), after);
          expect(pruned(restored)).toEqual(pruned(full));
          // redelivered from a commit before the snapshot: duplicates within the horizon, nothing past it
          foldBatched(restored, records.slice(commit % (records.length + 1)), after);
          expect(pruned(restored)).toEqual(pruned(full));
          // and the book holds only the alerts within the horizon of the latest one
          const clock = full.book.alerts_at ?? 0;
          for (const t of Object.values(full.book.alerts)) expect(t).toBeGreaterThanOrEqual(clock - H);
        },
      ),
      { numRuns: 300 },
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

  it('forgetting decided ids, holds the open comparisons only: as much after 500 decided comparisons as after 1', () => {
    // a comparison's own events (declared, confirmation asked, decided) and verdicts delivered again
    const comparisons = (n: number): Rec[] => {
      const out: DecisionEvent[] = [];
      for (let k = 0; k < n; k++) {
        const own = universe(k).filter((e) => e.type !== 'RunClosed' && e.type !== 'WindowAlertRaised');
        out.push(...own.filter((e) => e.type !== 'AdaptiveRoundDecided'), own.at(-1)!);
      }
      // one comparison left open at the end
      out.push(universe(n)[0]!);
      return out.map((event, offset) => ({ offset, event }));
    };
    const held = (n: number, forget: boolean) => {
      const snapshot = throughTheLog(
        toGateBookSnapshot(foldBatched(emptyPrefix(0, forget), comparisons(n), [7]), 0, 1, 'test'),
      );
      const { decided, verdicts, comparisons: open } = snapshot.book;
      return {
        decided: Object.keys(decided ?? {}).length,
        verdicts: Object.keys(verdicts).length,
        open: Object.keys(open).length,
      };
    };
    expect(held(500, true)).toEqual({ decided: 0, verdicts: 0, open: 1 });
    expect(held(500, true)).toEqual(held(1, true));
    // a book that keeps them holds every decided id and its candidates' verdicts (Kafka's gates)
    expect(held(500, false)).toEqual({ decided: 500, verdicts: 3, open: 1 });
  });

  it('that forgot decided ids serves only a restore that forgets them; one that kept them serves both', () => {
    const s = foldBatched(
      emptyPrefix(0, true),
      universe(1).map((event, offset) => ({ offset, event })),
      [6],
    );
    const forgot = toGateBookSnapshot(s, 0, 4, 'test');
    expect(forgot.forgot_decided).toBe(true);
    expect(usableSnapshot(forgot, 4, 6, 0, true)).toBe(forgot);
    expect(usableSnapshot(forgot, 4, 6, 0, false)).toBeUndefined(); // Kafka's gates would take decided ones for open
    const kept = toGateBookSnapshot(
      foldBatched(
        emptyPrefix(),
        universe(1).map((event, offset) => ({ offset, event })),
        [6],
      ),
      0,
      4,
      'test',
    );
    expect(kept.forgot_decided).toBeUndefined();
    expect(Object.keys(kept.book.decided ?? {})).toEqual(['c1']);
    expect(usableSnapshot(kept, 4, 6, 0, true)).toBe(kept);
    const restored = restorePrefix(kept, 0, true);
    expect(restored.book.decided).toBeUndefined();
    expect(restored.book.verdicts).toEqual({});
    expect(toGateBookSnapshot(restored, 0, 4, 'test').book).toEqual(forgot.book);
  });
});
