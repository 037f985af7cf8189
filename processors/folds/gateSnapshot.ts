import type { RunClosed } from '../../schemas/events/comparisons.ts';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { emptyBook, EVICT_DECIDED, foldBookInto, isDecision, type GateBook } from './gates.ts';

/**
 * One partition of passk.decisions folded from the log alone (its records before `through`, nothing else): what a
 * snapshot holds. The processors' live book also holds what they decided and have not read back yet; a snapshot of
 * that could claim a decision the log lost in a crash, so the snapshot is taken of this fold, which only the
 * partition's records feed. Pure: the same records give the same prefix, however they were batched or restored.
 */
export interface DecisionsPrefix {
  readonly book: GateBook;
  /** The partition's RunClosed by event id. */
  readonly closed: Map<string, RunClosed>;
  /** Records before this offset are folded in. */
  through: number;
  /** The latest event time folded (the snapshot's `occurred_at`). */
  at: number;
  /** Records folded since the last snapshot was taken (or restored). */
  since: number;
}

export const emptyPrefix = (): DecisionsPrefix => ({
  book: emptyBook(),
  closed: new Map(),
  through: 0,
  at: 0,
  since: 0,
});

/**
 * Folds records of the partition into the prefix: those before `through` are in it already (a redelivery after a
 * restore) and are skipped; `lastOffset` (the batch's, dead-lettered records included) moves `through` on.
 */
export const foldPrefix = (
  s: DecisionsPrefix,
  records: Iterable<{ readonly offset: number; readonly event: PasskEvent }>,
  lastOffset: number,
): void => {
  for (const { offset, event } of records) {
    if (offset < s.through) continue;
    if (isDecision(event)) {
      foldBookInto(s.book, event, EVICT_DECIDED);
      if (event.type === 'RunClosed') s.closed.set(event.event_id, event);
    }
    s.at = Math.max(s.at, event.occurred_at);
    s.since++;
  }
  s.through = Math.max(s.through, lastOffset + 1);
};

/** The snapshot of a prefix (a copy: the prefix goes on folding while it is published). */
export const toGateBookSnapshot = (
  s: DecisionsPrefix,
  partition: number,
  partitions: number,
  producer: string,
): GateBookSnapshot => ({
  event_id: deterministicEventId(s.at, 'GateBookSnapshot', partition, partitions, s.through),
  type: 'GateBookSnapshot',
  schema_version: 1,
  occurred_at: s.at,
  producer,
  partition,
  partitions,
  through_offset: s.through,
  book: structuredClone(s.book),
  closed: [...s.closed.values()],
});

/** The prefix a snapshot holds (its own copy), or an empty one. */
export const restorePrefix = (snapshot?: GateBookSnapshot): DecisionsPrefix =>
  snapshot
    ? {
        book: structuredClone(snapshot.book),
        closed: new Map(snapshot.closed.map((r) => [r.event_id, r])),
        through: snapshot.through_offset,
        at: snapshot.occurred_at,
        since: 0,
      }
    : emptyPrefix();

/**
 * The snapshot of a partition a restore may start from: the latest seen, of the same partition count, covering no
 * more than the partition holds (`high`: its next offset; a log re-created under an old passk.rowstate is replayed
 * from 0).
 */
export const usableSnapshot = (
  snapshot: GateBookSnapshot | undefined,
  partitions: number,
  high: number,
): GateBookSnapshot | undefined =>
  snapshot && snapshot.partitions === partitions && snapshot.through_offset <= high ? snapshot : undefined;

/** Keeps the latest snapshot per partition (the highest `through_offset`): a compacted topic may hold several. */
export const keepLatest = (into: Map<number, GateBookSnapshot>, s: GateBookSnapshot): void => {
  if ((into.get(s.partition)?.through_offset ?? -1) < s.through_offset) into.set(s.partition, s);
};
