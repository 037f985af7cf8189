import { map, tap, type Observable, type SchedulerLike } from 'rxjs';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { toRunClosed } from '../folds/gates.ts';
import type { StreamRowState } from '../folds/rowState.ts';
import { reportedSummaries, type ReportedSummary, type VersionSummary } from '../folds/versionSummary.ts';
import { batchRows } from '../operators/batchRows.ts';
import { foldUnits, weightOf, type FoldedUnit } from '../operators/foldUnits.ts';
import { createInFlight } from '../operators/inFlight.ts';
import { readToEnd } from '../operators/readToEnd.ts';
import type { RowstateFeed } from '../operators/rowstateFeed.ts';
import { createRowStore, type PartitionOf, type RowRestore } from '../operators/rowStore.ts';
import { writeAndEmit } from '../operators/writeAndEmit.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { DeadLetter, EventConsumer, EventPublisher, EventSource, TrialSink } from '../ports.ts';
import { runTopology } from './runner.ts';

export type { VersionSnapshot } from '../folds/versionSummary.ts';
export type { TrialSink } from '../ports.ts';

export interface TrialPorts {
  readonly source: EventSource;
  readonly publisher: EventPublisher;
  readonly sink: TrialSink;
  /**
   * Dead-letters the trials that conflict with a slot's first answer (the log's DLQ, and the store's
   * `dead_letters`), durably, once per source position. Without it they are only left out.
   */
  readonly deadLetter?: (letters: readonly DeadLetter[]) => Promise<void>;
}

export interface TrialTopologyOptions {
  /** @default 'passk-trials' */
  readonly groupId?: string;
  /** Unique per process: names the group that reads the changelog on restore. */
  readonly instanceId: string;
  /** `producer` of the events this topology emits; part of their bytes, so keep it stable. */
  readonly producer: string;
  /** The log's partitioner: which trial partition a restored row belongs to. */
  readonly partitionOf: PartitionOf;
  /** Graded attempts before a row is classified. @default 3 */
  readonly minAttempts?: number;
  /** Records per consumer batch. @default 1000 */
  readonly maxBatch?: number;
  /** A durable unit (changelog publish, sink write, commit) holds up to this many records… @default 5000 */
  readonly maxRows?: number;
  /** …or what arrived within this many ms of its first batch. @default 500 */
  readonly maxWaitMs?: number;
  /**
   * Durable units whose changelog publish may be in flight at once (the next unit's is sent while this
   * one's acks are awaited; per-key order and in-order commits hold, see `writeAndEmit`). 1 = one at a
   * time. Off by default: it measured no gain on Kafka here (docs/performance.md). @default 1
   */
  readonly maxPublishesInFlight?: number;
  /**
   * A unit closes as soon as the consumer has read every partition it owns to its end (`EventBatch.caughtUp`), not
   * at the end of its window: `passk process --until-caught-up` does not hold its last unit for the window. Off by
   * default: on a live stream that is caught up it would make a unit, and a store insert, per poll. @default false
   */
  readonly closeUnitsWhenCaughtUp?: boolean;
  /** Records pulled and not yet committed; the consumer pauses beyond it. @default 4 × maxRows */
  readonly maxInFlight?: number;
  /** Resolve to stop: pulling stops, what is in flight becomes durable and is committed, the stream completes. */
  readonly stop?: Promise<unknown>;
  /** Also stop once every partition's lag is zero and nothing is in flight, checked this often (ms). */
  readonly untilCaughtUpEveryMs?: number;
  /** Hands over a probe: true when nothing is in flight and every partition's lag is zero (deploy's until-caught-up). */
  readonly onIdleProbe?: (probe: () => Promise<boolean>) => void;
  /**
   * Restore assigned partitions' rows from the changelog. False for a replay from the first trial into an empty
   * store (`passk rebuild`): the rows are folded again from nothing, to the same states and seqs. @default true
   */
  readonly restoreFromChangelog?: boolean;
  /** Told when trial partitions are assigned (after their rows are restored) or revoked. */
  readonly onAssignment?: (change: { assigned: number[]; revoked: number[]; restoredRows: number }) => void;
  /** A commit refused because the partition moved to another member (dropped, not fatal). */
  readonly isCommitRejected?: (e: unknown) => boolean;
  readonly scheduler?: SchedulerLike;
  /** Hands the gates of this process what a restore read of the changelog, and each unit's changelog once durable. */
  readonly rowstate?: RowstateFeed;
  /**
   * Hands over, once, the versions of every row this topology holds (restored from the changelog and folded since),
   * as `passk report` counts them: `passk process`'s summary when no unit was processed (nothing new to fold).
   */
  readonly onRows?: (reported: (rounds?: ReadonlyMap<string, number>) => ReportedSummary[]) => void;
}

/** Emitted after each commit. */
export interface TrialProgress {
  readonly committed: boolean;
  readonly positions: FoldedUnit['positions'];
  readonly lag: FoldedUnit['lag'];
  readonly records: number;
  readonly trials: number;
  readonly rowsChanged: number;
  readonly skipped: number;
  /** Trials dead-lettered as conflicts (another answer for a slot already answered). */
  readonly conflicts: number;
  readonly summaries: () => VersionSummary[];
  /** The versions as `passk report` counts them: confirmation runs' attempts left out (`reportedSummaries`). */
  readonly reported: () => ReportedSummary[];
}

/**
 * The trial topology's restore read: passk.rowstate from its start to its end, each row state record handed to
 * `restoring` as it comes and to the gates of this process (`rowstate`), a few thousand at a time, so a restore of
 * 1M rows never holds them all (the gates decide nothing before the writers' `assigned`: the feed is not loaded
 * until then). Exported for bench/restore.ts, which measures it.
 */
export const restoreRows = async (
  source: EventSource,
  restoring: RowRestore,
  o: { readonly groupId: string; readonly rowstate?: RowstateFeed; readonly stop?: Promise<unknown> },
): Promise<void> => {
  let records: RowStateChanged[] = [];
  // the row state made of each, which the gates' table holds as it is (frozen: the fold copies it before a change)
  let states: (StreamRowState | undefined)[] = [];
  await readToEnd(source, {
    topic: TOPICS.rowstate,
    groupId: o.groupId,
    trusted: true, // the changelog this topology wrote
    onEvent: (e) => {
      if (e.type !== 'RowStateChanged') return;
      const s = restoring.add(e);
      if (o.rowstate === undefined) return;
      states.push(s);
      if (records.push(e) >= 5_000) {
        o.rowstate.push(records, states);
        records = [];
        states = [];
      }
    },
    stop: o.stop,
  });
  o.rowstate?.push(records, states);
};

/**
 * passk.trials → fold per-row state → sink + passk.rowstate (changelog) → commit.
 * Restore: the rows of newly assigned partitions from the compacted changelog (no replay of trials).
 *
 *   pullBatches ─▶ batchRows ─▶ foldUnits ─▶ writeAndEmit (store write ∥ changelog publish) ─▶ commitWhenDurable
 *
 * On a log that can (`EventConsumer.publishAndCommit`: the embedded log), the unit is only written (writeRows) and
 * its changelog is appended in its commit's transaction.
 *
 * A unit's changelog may so be durable while its store write failed: the restore then marks each partition's
 * uncommitted records as a repair window, and foldUnits rewrites what the restored rows already hold of them to the
 * store, before they are committed (docs/reliability.md, "The store behind the changelog").
 *
 * A durable unit is folded in one pass when it is complete (batchRows: by rows or by time), so each
 * changed row is read and its record built once per unit, not once per batch.
 */
export const trialTopology = (ports: TrialPorts, o: TrialTopologyOptions): Observable<TrialProgress> => {
  const groupId = o.groupId ?? 'passk-trials';
  const maxRows = o.maxRows ?? 5_000;
  const store = createRowStore();
  o.onRows?.((rounds) => reportedSummaries(store.rows(), o.minAttempts, rounds));
  const changesOf = (u: FoldedUnit) => [...u.changelog, ...u.finished.map((f) => toRunClosed(f, o.producer))];
  // only where the consumer's log is where this topology publishes (a replay into the store publishes nowhere)
  const atomic = (consumer: EventConsumer) =>
    consumer.publishAndCommit !== undefined &&
    consumer.publisher === ports.publisher &&
    (o.maxPublishesInFlight ?? 1) <= 1;
  const writeUnit = async (u: FoldedUnit): Promise<void> => {
    // a conflict is dead-lettered before the unit's rows, so it is durable before the commit
    if (u.conflicts.length > 0) await ports.deadLetter?.(u.conflicts);
    // the repair's rows too (foldUnits: records read again whose changelog may be ahead of the store)
    const { repaired } = u;
    await ports.sink.writeTrials({
      trials: repaired.trials.length === 0 ? u.trials : [...u.trials, ...repaired.trials],
      rowStates: repaired.rowStates.length === 0 ? u.changelog : [...u.changelog, ...repaired.rowStates],
      finished: u.finished,
      retracted: u.retracted,
      summaries: u.summaries,
    });
  };
  return runTopology(
    {
      source: ports.source,
      groupId,
      topic: TOPICS.trials,
      maxBatch: o.maxBatch,
      inFlight: createInFlight(o.maxInFlight ?? 4 * maxRows),
      stop: o.stop,
      untilCaughtUpEveryMs: o.untilCaughtUpEveryMs,
      onIdleProbe: o.onIdleProbe,
      isCommitRejected: o.isCommitRejected,
      scheduler: o.scheduler,
      restore: async (partitions, { consumer, stop, stopping }) => {
        o.rowstate?.restoring('trials');
        const lags = (await consumer.lag()).filter((l) => l.topic === TOPICS.trials);
        const total = lags.length;
        const restoring = store.restoring(partitions, o.partitionOf, total);
        if (o.restoreFromChangelog !== false)
          await restoreRows(ports.source, restoring, {
            groupId: `${groupId}.restore.${o.instanceId}`,
            rowstate: o.rowstate,
            stop,
          });
        if (stopping()) return;
        const restoredRows = restoring.done();
        // the store's repair: what the changelog holds of records not committed (their store write may have failed,
        // or the process died between the two) is written to the store again as those records are read again, up to
        // each partition's end as it is now (nothing past it was ever folded). Not where the changelog is appended in
        // the commit's transaction (atomic: the embedded log), after the store write: it is never ahead of the store
        if (o.restoreFromChangelog !== false && !atomic(consumer)) {
          const committed = await consumer.committed(TOPICS.trials);
          for (const l of lags)
            // a partition the changelog gave no row has nothing to repair
            if (partitions.includes(l.partition) && store.table(l.partition).size > 0)
              store.setRepairUntil(l.partition, (committed.get(l.partition) ?? 0) + l.lag);
        }
        o.rowstate?.assigned('trials', partitions, total);
        o.onAssignment?.({ assigned: partitions, revoked: [], restoredRows });
      },
      drop: (revoked) => {
        store.drop(revoked);
        o.rowstate?.revoked('trials', revoked);
        o.onAssignment?.({ assigned: [], revoked, restoredRows: 0 });
      },
    },
    (batches, consumer) =>
      batches.pipe(
        batchRows({
          maxRows,
          maxWaitMs: o.maxWaitMs ?? 500,
          sizeOf: weightOf,
          closesGroup: (b) => o.closeUnitsWhenCaughtUp === true && b.caughtUp === true,
          scheduler: o.scheduler,
        }),
        foldUnits(store, o.producer, { minAttempts: o.minAttempts }),
        // the unit's store write and its changelog publish at the same time (writeAndEmit), committed once both are
        // durable; where the log can (embedded), the changelog is appended in the commit's own transaction instead
        // (below), after the store write. The changelog is built here from validated trials: serialized as built, not
        // validated again (the unit tests' in-memory log still validates every one)
        atomic(consumer)
          ? writeRows(writeUnit)
          : writeAndEmit(writeUnit, (events) => ports.publisher.publish(events, { trusted: true }), changesOf, {
              concurrency: o.maxPublishesInFlight ?? 1,
            }),
      ),
    // the changelog and the offsets in one transaction: one fsync a unit, and neither is durable without the other
    (consumer, u) =>
      atomic(consumer)
        ? consumer.publishAndCommit!(changesOf(u), u.positions, { trusted: true })
        : consumer.commit(u.positions),
  ).pipe(
    // durable now (store and changelog; committed too, unless the partition moved): the gates of this process may
    // decide on it; with each record its row state, which the gates hold as it is (frozen)
    tap((u) => o.rowstate?.push(u.changelog, u.states)),
    map((u) => ({
      committed: u.committed,
      positions: u.positions,
      lag: u.lag,
      records: u.weight,
      trials: u.trials.length,
      rowsChanged: u.changelog.length,
      skipped: u.skipped,
      conflicts: u.conflicts.length,
      summaries: () => store.totals(),
      reported: () => reportedSummaries(store.rows(), o.minAttempts),
    })),
  );
};
