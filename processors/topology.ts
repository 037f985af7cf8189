import { defer, EMPTY, finalize, from, map, merge, Subject, switchMap, type Observable, type SchedulerLike } from 'rxjs';
import type { PasskEvent } from '../schemas/events/index.ts';
import type { RowStateChanged } from '../schemas/events/decisions.ts';
import type { RunFinished } from '../schemas/events/runFinished.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { TOPICS, type Topic } from '../schemas/topics.ts';
import { toRunClosed } from './folds/gates.ts';
import type { VersionSummary } from './folds/versionSummary.ts';
import type { EventConsumer, EventPublisher, EventSource } from './ports.ts';
import { batchRows } from './operators/batchRows.ts';
import { coalesceTrials } from './operators/coalesceTrials.ts';
import { commitWhenDurable } from './operators/commitWhenDurable.ts';
import { emitChanges } from './operators/emitChanges.ts';
import { foldRows, type FoldedTrials } from './operators/foldRows.ts';
import { createInFlight } from './operators/inFlight.ts';
import { applyGateInput, createGateStore, decideGates, type GateDecisionOptions, type GateInput } from './operators/decideGates.ts';
import type { WindowTotal } from './folds/windowTotals.ts';
import { DEFAULT_WINDOWS, restoreWindows, type WindowSpec } from './folds/windows.ts';
import { mergeFoldedTraces, windowTraces, type WindowTables } from './operators/windowTraces.ts';
import type { TraceWindowsUpdated } from '../schemas/events/traceWindowsUpdated.ts';
import { foldDatasetBatch, foldDatasets, type DatasetTables } from './operators/foldDatasets.ts';
import { tailTopic } from './operators/tailTopic.ts';
import { pullBatches } from './operators/pullBatches.ts';
import { readToEnd } from './operators/readToEnd.ts';
import { createRowStore, type PartitionOf, type RowStore } from './operators/rowStore.ts';
import { stopWhenCaughtUp } from './operators/stopWhenCaughtUp.ts';
import { toChangelog } from './operators/toChangelog.ts';
import { writeRows } from './operators/writeRows.ts';

/**
 * One version's aggregates over one trial partition, as of `nextOffset` of that partition: the
 * store keeps the snapshot with the highest `nextOffset` per (version, partition), and a version's
 * summary is the sum of its partitions' snapshots (a few rows, whatever the number of trials).
 */
export interface VersionSnapshot {
  readonly partition: number;
  /** The partition's position after the unit that produced this snapshot (monotonic per partition). */
  readonly nextOffset: number;
  readonly summary: VersionSummary;
}

/** What the trial topology writes to the store, per durable unit. Idempotent: a replay writes the same rows. */
export interface TrialSink {
  writeTrials(unit: {
    trials: readonly TrialRecorded[];
    rowStates: readonly RowStateChanged[];
    finished: readonly RunFinished[];
    /** Snapshots of the versions this unit changed, taken when it was folded. */
    summaries?: readonly VersionSnapshot[];
  }): Promise<void>;
}

export interface TrialPorts {
  readonly source: EventSource;
  readonly publisher: EventPublisher;
  readonly sink: TrialSink;
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
  /** Records pulled and not yet committed; the consumer pauses beyond it. @default 4 × maxRows */
  readonly maxInFlight?: number;
  /** Resolve to stop: pulling stops, what is in flight becomes durable and is committed, the stream completes. */
  readonly stop?: Promise<unknown>;
  /** Also stop once every partition's lag is zero and nothing is in flight, checked this often (ms). */
  readonly untilCaughtUpEveryMs?: number;
  /** Hands over a probe: true when nothing is in flight and every partition's lag is zero (deploy's until-caught-up). */
  readonly onIdleProbe?: (probe: () => Promise<boolean>) => void;
  /** Told when trial partitions are assigned (after their rows are restored) or revoked. */
  readonly onAssignment?: (change: { assigned: number[]; revoked: number[]; restoredRows: number }) => void;
  /** A commit refused because the partition moved to another member (dropped, not fatal). */
  readonly isCommitRejected?: (e: unknown) => boolean;
  readonly scheduler?: SchedulerLike;
}

/** Emitted after each commit. */
export interface TrialProgress {
  readonly committed: boolean;
  readonly positions: FoldedTrials['positions'];
  readonly lag: FoldedTrials['lag'];
  readonly records: number;
  readonly trials: number;
  readonly rowsChanged: number;
  readonly skipped: number;
  readonly summaries: () => VersionSummary[];
}

const NEVER_STOP = new Promise<never>(() => {});

const openConsumer = async (ports: TrialPorts, o: TrialTopologyOptions, store: RowStore, drained: () => Promise<void>, stop: Promise<unknown>) => {
  let stopping = false;
  void stop.then(() => (stopping = true));
  const groupId = o.groupId ?? 'passk-trials';
  // the callbacks run only while batches() is iterated, after `consumer` is set
  const consumer: EventConsumer = await ports.source.consumer({
    groupId,
    topics: [TOPICS.trials],
    maxBatch: o.maxBatch ?? 1_000,
    // restore the rows of newly assigned partitions from the compacted changelog: no replay of trials
    onAssigned: async (tps) => {
      const partitions = tps.filter((tp) => tp.topic === TOPICS.trials).map((tp) => tp.partition);
      if (partitions.length === 0 || stopping) return; // shutting down: nothing more will be folded
      const total = (await consumer.lag()).filter((l) => l.topic === TOPICS.trials).length;
      const records: RowStateChanged[] = [];
      await readToEnd(ports.source, {
        topic: TOPICS.rowstate,
        groupId: `${groupId}.restore.${o.instanceId}`,
        onEvent: (e) => void (e.type === 'RowStateChanged' && records.push(e)),
        stop,
      });
      if (stopping) return;
      const restoredRows = store.restore(partitions, records, o.partitionOf, total);
      o.onAssignment?.({ assigned: partitions, revoked: [], restoredRows });
    },
    // make what is in flight durable (and committed) before the partitions move, then drop their rows
    onRevoked: async (tps) => {
      await drained();
      const revoked = tps.filter((tp) => tp.topic === TOPICS.trials).map((tp) => tp.partition);
      store.drop(revoked);
      o.onAssignment?.({ assigned: [], revoked, restoredRows: 0 });
    },
  });
  return consumer;
};

/**
 * passk.trials → fold per-row state → passk.rowstate (changelog) + sink → commit.
 *
 *   pullBatches ─▶ foldRows ─▶ batchRows ─▶ coalesceTrials ─▶ toChangelog ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 */
export const trialTopology = (ports: TrialPorts, o: TrialTopologyOptions): Observable<TrialProgress> => {
  const maxRows = o.maxRows ?? 5_000;
  const store = createRowStore();
  const inFlight = createInFlight(o.maxInFlight ?? 4 * maxRows);
  let requestStop!: () => void;
  const stop = new Promise<void>((resolve) => (requestStop = resolve));
  void (o.stop ?? NEVER_STOP).then(requestStop);
  return defer(() => from(openConsumer(ports, o, store, () => inFlight.drained(), stop))).pipe(
    switchMap((consumer) => {
      o.onIdleProbe?.(async () => inFlight.count === 0 && (await consumer.lag()).every((l) => l.lag === 0) && inFlight.count === 0);
      if (o.untilCaughtUpEveryMs)
        void stopWhenCaughtUp(consumer, inFlight, { everyMs: o.untilCaughtUpEveryMs, stop, scheduler: o.scheduler }).then(requestStop);
      return pullBatches(consumer.batches(), inFlight, stop).pipe(
        foldRows(store, { minAttempts: o.minAttempts }),
        batchRows({ maxRows, maxWaitMs: o.maxWaitMs ?? 500, sizeOf: (f) => f.weight, scheduler: o.scheduler }),
        coalesceTrials(),
        toChangelog(o.producer),
        emitChanges((events) => ports.publisher.publish(events), (u) => [...u.changelog, ...u.finished.map((f) => toRunClosed(f, o.producer))]),
        writeRows((u) => ports.sink.writeTrials({ trials: u.trials, rowStates: u.changelog, finished: u.finished })),
        commitWhenDurable((positions) => consumer.commit(positions), inFlight, o.isCommitRejected),
        map((u) => ({
          committed: u.committed,
          positions: u.positions,
          lag: u.lag,
          records: u.weight,
          trials: u.trials.length,
          rowsChanged: u.changes.size,
          skipped: u.skipped,
          summaries: () => store.totals(),
        })),
        finalize(() => void consumer.close()),
      );
    }),
  );
};

/** Options every topology shares. */
export interface TopologyOptions {
  readonly groupId?: string;
  readonly instanceId: string;
  readonly producer: string;
  readonly stop?: Promise<unknown>;
  readonly maxBatch?: number;
  readonly maxInFlight?: number;
  readonly onIdleProbe?: (probe: () => Promise<boolean>) => void;
  readonly isCommitRejected?: (e: unknown) => boolean;
}

/** What the datasets, gates and windows topologies write to the store, idempotently. */
export interface EventSink {
  writeEvents(events: readonly PasskEvent[]): Promise<void>;
  /** Production window totals; the store keeps the highest seq per window. */
  writeWindows(windows: readonly WindowTotal[]): Promise<void>;
}

export interface EventPorts {
  readonly source: EventSource;
  readonly publisher: EventPublisher;
  readonly sink: EventSink;
}

/** Emitted after each commit of the datasets or gates topology. */
export interface DecisionProgress {
  readonly committed: boolean;
  readonly emitted: readonly PasskEvent[];
}

/**
 * passk.datasets → dataset versions (a confirmed failure → a must-not-break row in a new version) → store → commit.
 * State is restored by re-reading the owned partitions up to the group's committed positions
 * (the topic is its own changelog: it is small, and its events are the state).
 *
 *   pullBatches ─▶ foldDatasets ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 */
export const datasetTopology = (ports: EventPorts, o: TopologyOptions): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-datasets';
  const tables: DatasetTables = new Map();
  const inFlight = createInFlight(o.maxInFlight ?? 10_000);
  const stop = o.stop ?? NEVER_STOP;
  return defer(async () => {
    const consumer: EventConsumer = await ports.source.consumer({
      groupId,
      topics: [TOPICS.datasets],
      maxBatch: o.maxBatch ?? 1_000,
      onAssigned: async (tps) => {
        const partitions = new Set(tps.map((tp) => tp.partition));
        for (const p of partitions) tables.set(p, new Map());
        const upTo = await consumer.committed(TOPICS.datasets);
        const replay = new Map<number, PasskEvent[]>();
        await readToEnd(ports.source, {
          topic: TOPICS.datasets,
          groupId: `${groupId}.restore.${o.instanceId}`,
          upTo,
          stop,
          onEvent: (e, p) => void (partitions.has(p) && (replay.get(p) ?? replay.set(p, []).get(p)!).push(e)),
        });
        for (const [p, events] of replay) foldDatasetBatch(tables, p, events, o.producer);
      },
      onRevoked: async (tps) => {
        await inFlight.drained();
        for (const tp of tps) tables.delete(tp.partition);
      },
    });
    return consumer;
  }).pipe(
    switchMap((consumer) => {
      o.onIdleProbe?.(async () => inFlight.count === 0 && (await consumer.lag()).every((l) => l.lag === 0));
      return pullBatches(consumer.batches(), inFlight, stop).pipe(
        foldDatasets(tables, o.producer),
        emitChanges((events) => ports.publisher.publish(events), (u) => u.emitted),
        writeRows((u) => ports.sink.writeEvents(u.events)),
        commitWhenDurable((positions) => consumer.commit(positions), inFlight, o.isCommitRejected),
        map((u) => ({ committed: u.committed, emitted: u.emitted })),
        finalize(() => void consumer.close()),
      );
    }),
  );
};

/**
 * passk.decisions (owned: a candidate's comparisons) + passk.rowstate and passk.datasets (followed
 * whole, as global tables) → confirmation requests and gate verdicts → passk.decisions + store → commit.
 * The books are restored by re-reading the owned partitions of passk.decisions to their end, so a
 * verdict already published is known before anything is decided again.
 *
 *   tailTopic(rowstate) ─┐
 *   tailTopic(datasets) ─┼▶ decideGates ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 *   pullBatches(decisions)┘
 */
export const gateTopology = (
  ports: EventPorts,
  o: TopologyOptions & { readonly minAttempts?: number; readonly partitionOf: PartitionOf; readonly alert?: GateDecisionOptions['alert'] },
): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-gates';
  const store = createGateStore();
  const inFlight = createInFlight(o.maxInFlight ?? 20_000);
  const stop = o.stop ?? NEVER_STOP;
  const stopped = stop.then(() => 'stopped' as const);
  const ticks = new Subject<GateInput>();
  void stop.then(() => ticks.complete());
  const tail = (topic: Topic) => tailTopic(ports.source, { topic, groupId: `${groupId}.${topic}.${o.instanceId}`, inFlight, stop });
  const openDecisions = async (): Promise<EventConsumer> => {
    const consumer: EventConsumer = await ports.source.consumer({
      groupId,
      topics: [TOPICS.decisions],
      maxBatch: o.maxBatch ?? 1_000,
      onAssigned: async (tps) => {
        const partitions = new Set(tps.map((tp) => tp.partition));
        store.decisionPartitions = (await consumer.lag()).filter((l) => l.topic === TOPICS.decisions).length;
        const replay = new Map<number, PasskEvent[]>();
        await readToEnd(ports.source, {
          topic: TOPICS.decisions,
          groupId: `${groupId}.restore.${o.instanceId}`,
          stop,
          onEvent: (e, p) => void (partitions.has(p) && (replay.get(p) ?? replay.set(p, []).get(p)!).push(e)),
        });
        for (const p of partitions) {
          const events = (replay.get(p) ?? []).map((event, offset) => ({ topic: TOPICS.decisions, partition: p, offset, key: '', event }));
          applyGateInput(store, { source: 'decisions', batch: { topic: TOPICS.decisions, partition: p, events, lastOffset: events.length - 1, highWatermark: events.length } }, o.producer);
        }
        ticks.next({ source: 'tick' }); // decide what the restored books and loaded tables already complete
      },
      onRevoked: async (tps) => {
        await inFlight.drained();
        for (const tp of tps) store.books.delete(tp.partition);
      },
    });
    return consumer;
  };
  return defer(async () => Promise.all([tail(TOPICS.rowstate), tail(TOPICS.datasets)])).pipe(
    switchMap(([rows, datasets]) => {
      let decisions: EventConsumer | undefined;
      const decisions$ = from(Promise.race([Promise.all([rows.loaded, datasets.loaded]), stopped])).pipe(
        switchMap((ready) => (ready === 'stopped' ? EMPTY : from(openDecisions()))),
        switchMap((consumer) => {
          decisions = consumer;
          o.onIdleProbe?.(async () => inFlight.count === 0 && (await consumer.lag()).every((l) => l.lag === 0) && (await rows.caughtUp()) && (await datasets.caughtUp()));
          return pullBatches(consumer.batches(), inFlight, stop).pipe(
            map((batch): GateInput => ({ source: 'decisions', batch })),
            finalize(() => void consumer.close()),
          );
        }),
      );
      return merge(
        ticks,
        rows.batches$.pipe(map((batch): GateInput => ({ source: 'rowstate', batch }))),
        datasets.batches$.pipe(map((batch): GateInput => ({ source: 'datasets', batch }))),
        decisions$,
      ).pipe(
        decideGates(store, { producer: o.producer, partitionOf: o.partitionOf, ...(o.minAttempts ? { minAttempts: o.minAttempts } : {}), ...(o.alert ? { alert: o.alert } : {}) }),
        emitChanges((events) => ports.publisher.publish(events), (u) => u.emitted),
        writeRows(async (u) => {
          await ports.sink.writeEvents(u.emitted.filter((e) => e.type !== 'ConfirmationRequested'));
          if (u.windows.length > 0) await ports.sink.writeWindows(u.windows);
        }),
        commitWhenDurable((positions) => (positions.length === 0 || !decisions ? Promise.resolve() : decisions.commit(positions)), inFlight, o.isCommitRejected),
        map((u) => ({ committed: u.committed, emitted: u.emitted })),
      );
    }),
  );
};

/**
 * passk.traces → per-partition shares of every production window (event time, allowed lateness,
 * Horvitz–Thompson sums, flips) → passk.rowstate (compacted: one snapshot record per partition)
 * + raw traces to the store → commit. The gates sum the shares, write the windows and raise alerts.
 * Restore: a partition's latest snapshot, skipping the traces it already reflects.
 *
 *   pullBatches ─▶ windowTraces ─▶ batchRows ─▶ coalesce ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 */
export const windowTopology = (
  ports: EventPorts,
  o: TopologyOptions & { readonly windows?: readonly WindowSpec[]; readonly allowedLatenessMs?: number; readonly maxRows?: number; readonly maxWaitMs?: number },
): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-windows';
  const w = { specs: o.windows ?? DEFAULT_WINDOWS, allowedLatenessMs: o.allowedLatenessMs ?? 300_000, producer: o.producer };
  const tables: WindowTables = new Map();
  const maxRows = o.maxRows ?? 5_000;
  const inFlight = createInFlight(o.maxInFlight ?? 4 * maxRows);
  const stop = o.stop ?? NEVER_STOP;
  let partitions = 1;
  return defer(async () => {
    const consumer: EventConsumer = await ports.source.consumer({
      groupId,
      topics: [TOPICS.traces],
      maxBatch: o.maxBatch ?? 1_000,
      onAssigned: async (tps) => {
        const assigned = new Set(tps.map((tp) => tp.partition));
        partitions = (await consumer.lag()).filter((l) => l.topic === TOPICS.traces).length;
        const snapshots: TraceWindowsUpdated[] = [];
        await readToEnd(ports.source, {
          topic: TOPICS.rowstate,
          groupId: `${groupId}.restore.${o.instanceId}`,
          stop,
          onEvent: (e) => void (e.type === 'TraceWindowsUpdated' && assigned.has(e.source_partition) && snapshots.push(e)),
        });
        for (const p of assigned) tables.set(p, restoreWindows(p, snapshots, w));
      },
      onRevoked: async (tps) => {
        await inFlight.drained();
        for (const tp of tps) tables.delete(tp.partition);
      },
    });
    return consumer;
  }).pipe(
    switchMap((consumer) => {
      o.onIdleProbe?.(async () => inFlight.count === 0 && (await consumer.lag()).every((l) => l.lag === 0));
      return pullBatches(consumer.batches(), inFlight, stop).pipe(
        windowTraces(tables, { ...w, partitions: () => partitions }),
        batchRows({ maxRows, maxWaitMs: o.maxWaitMs ?? 500, sizeOf: (f) => f.weight }),
        map(mergeFoldedTraces),
        emitChanges((events) => ports.publisher.publish(events), (u) => [...u.snapshots.values()]),
        writeRows((u) => ports.sink.writeEvents(u.traces)),
        commitWhenDurable((positions) => consumer.commit(positions), inFlight, o.isCommitRejected),
        map((u) => ({ committed: u.committed, emitted: [...u.snapshots.values()] })),
        finalize(() => void consumer.close()),
      );
    }),
  );
};
