import { ignoreElements, lastValueFrom, merge, tap } from 'rxjs';
import { CommitRejected } from '../log/errors.ts';
import { partitionOf } from '../log/partitioner.ts';
import {
  READ_TO_END_WAIT_MS,
  type EventConsumer,
  type EventLog,
  type EventPublisher,
  type EventSource,
} from '../processors/ports.ts';
import { trialTopology } from '../processors/index.ts';
import { archiveTopology } from '../processors/topologies/archive.ts';
import { ingestLetterTopology } from '../processors/topologies/ingestLetters.ts';
import { totalOf, windowKeyOf, type WindowTotal } from '../processors/folds/windowTotals.ts';
import { readToEnd } from '../processors/operators/readToEnd.ts';
import type { PasskEvent } from '../schemas/events/index.ts';
import type { TraceWindowsUpdated, WindowShareRecord } from '../schemas/events/traceWindowsUpdated.ts';
import { TOPICS, type Topic } from '../schemas/topics.ts';
import type { ClickHouseRowSink, StoreClient } from '../sinks/clickhouse/index.ts';
import { ledgerRows } from '../sinks/clickhouse/ledger.ts';
import { markerOf, PROJECTIONS, storeDrift, type StoreDrift } from './drift.ts';
import {
  allIdle,
  PROCESSORS_PRODUCER,
  STORED,
  storeEventSink,
  storeIngestLetters,
  storeTrialSink,
  conflictLetters,
  storingDeadLetters,
} from './storeSinks.ts';
import { storeRowSink } from './store.ts';

// What the store lacks of the log, apart from the replay below (deploy/drift.ts), under its former address too.
export { describeDrift, needsRebuild, PROJECTIONS, storeDrift, type BehindPosition, type StoreDrift } from './drift.ts';

/**
 * Every commit of a consumer of `source` first records its positions in the store's ledger, durably, under the
 * projections `projectionsOf` names (by default its own group; none for a one-use reader, which never commits).
 */
export const ledgered = (
  source: EventSource,
  sink: ClickHouseRowSink,
  projectionsOf: (groupId: string, transient: boolean) => readonly string[] = (g, transient) => (transient ? [] : [g]),
): EventSource => ({
  consumer: async (options) => {
    const consumer = await source.consumer(options);
    const projections = projectionsOf(options.groupId, options.transient ?? false);
    if (projections.length === 0) return consumer;
    const commit = consumer.commit.bind(consumer);
    const publishAndCommit = consumer.publishAndCommit?.bind(consumer);
    const ledger = async (positions: Parameters<EventConsumer['commit']>[0]) => {
      if (positions.length === 0) return;
      await sink.write(
        'store_positions',
        ledgerRows(projections.flatMap((projection) => positions.map((p) => ({ projection, ...p })))),
      );
      await sink.flush();
    };
    return Object.assign(consumer, {
      commit: async (positions: Parameters<EventConsumer['commit']>[0]) => {
        await ledger(positions);
        await commit(positions);
      },
      // the ledger before the commit here too (it may then be ahead of the changelog: a redelivered unit changes no row)
      ...(publishAndCommit && {
        publishAndCommit: async (...args: Parameters<NonNullable<EventConsumer['publishAndCommit']>>) => {
          await ledger(args[1]);
          await publishAndCommit(...args);
        },
      }),
    });
  },
  ...(source.readsByKey && { readsByKey: source.readsByKey }),
});

export interface RebuildOptions {
  readonly log: EventLog;
  /** The open store: the replay writes through a row sink of its own (its own deduplication tokens). */
  readonly store: Pick<StoreClient, 'client' | 'insertJsonRows'>;
  /** Unique per process: names the one-use groups of the replay. */
  readonly instanceId: string;
  /** Graded attempts before a row is classified (the processors'). @default 3 */
  readonly minAttempts?: number;
  readonly maxWaitMs?: number;
  /** Told when a replay lost its partitions midway and starts over with new groups (`rebuildStore`). */
  readonly onRestart?: (e: CommitRejected) => void;
  /** Records replayed so far and in all (the total grows while the replay's readers join). */
  readonly onProgress?: (done: number, total: number) => void;
}

export interface RebuildResult {
  /** Records read from the log. */
  readonly records: number;
  /** Trials folded. */
  readonly trials: number;
  /** The drift after the replay: `damaged` when the log itself gives trials and row states that differ. */
  readonly after: StoreDrift;
}

/** A publisher that drops everything: a replay into the store publishes nothing (the log already holds it). */
const nowhere: EventPublisher = {
  publish: async () => {},
  publishRaw: async () => {},
  publishDeadLetters: async () => 0,
  close: async () => {},
};

/** The topics copied as they are: their stored event types (and alerts), whoever processed them. */
const COPIED: readonly Topic[] = [TOPICS.traces, TOPICS.datasets, TOPICS.decisions, TOPICS.judgments];
const KEPT = new Set<PasskEvent['type']>([...STORED, 'WindowAlertRaised']);

/**
 * Rebuilds the store from the log: the trials are folded again from the first one (no changelog restore, nothing
 * published), writing trials, row states (the same seqs and event ids: a row's seq counts its attempts), finished
 * runs and version summaries; every other stored event is copied from its topic. One-use groups read each topic to
 * its end; every commit records its positions in the ledger under the projections of that topic, so the ledger is
 * at least at every group's committed offsets afterwards. Idempotent: every table collapses copies of a row.
 * Production windows are summed again from the window processor's snapshots on passk.rowstate (`replayWindows`);
 * alerts are copied from passk.decisions.
 */
export const rebuildStore = async (o: RebuildOptions): Promise<RebuildResult> => {
  const sink = storeRowSink(o.store, { tokenSalt: `rebuild ${o.instanceId}` });
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await replay({ ...o, instanceId: attempt === 1 ? o.instanceId : `${o.instanceId}.${attempt}` }, sink);
      } catch (e) {
        // A replay group whose commit is refused as fenced has lost its partitions, or is about to (kafkajs joins
        // again after a coordinator moved, or restarts a crashed consumer). Its folds start empty
        // (`restoreFromChangelog: false`), so going on from its last commit would fold a part of the log and write
        // row states and summaries of that part. The replay starts over with new groups instead: every table
        // collapses copies, and a whole fold's states are the latest.
        if (!(e instanceof CommitRejected) || attempt >= REPLAY_ATTEMPTS) throw e;
        o.onRestart?.(e);
      }
    }
  } finally {
    await sink.close().catch(() => {});
  }
};

/** Replays of the log a rebuild tries when one of its groups loses its partitions midway (a fenced commit). */
const REPLAY_ATTEMPTS = 3;

const replay = async (o: RebuildOptions, sink: ClickHouseRowSink): Promise<RebuildResult> => {
  const topicOfGroup = new Map<string, Topic>();
  const projectionsOf = (groupId: string) => {
    const topic = topicOfGroup.get(groupId);
    return topic ? PROJECTIONS.filter((p) => p.topic === topic).map((p) => p.group) : [];
  };
  const consumers = new Set<EventConsumer>();
  const base = ledgered(storingDeadLetters(o.log, sink), sink, projectionsOf);
  const source: EventSource = {
    consumer: async (options) => {
      // the replay's own groups are one-use: nothing is left behind on Kafka; each is closed once the replay is
      // caught up, so an idle fetch then in flight must not hold its close for a second (ConsumerOptions.idleWaitMs)
      const c = await base.consumer({
        ...options,
        transient: topicOfGroup.has(options.groupId) || options.transient,
        idleWaitMs: options.idleWaitMs ?? READ_TO_END_WAIT_MS,
      });
      if (topicOfGroup.has(options.groupId)) consumers.add(c);
      return c;
    },
    ...(base.readsByKey && { readsByKey: base.readsByKey }),
  };
  const groupOf = (topic: Topic) => {
    const group = `passk-rebuild-${topic}.${o.instanceId}`;
    topicOfGroup.set(group, topic);
    return group;
  };
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const probes: (() => Promise<boolean>)[] = [];
  const halt = allIdle(probes, 2 + COPIED.length, stopped);
  const common = {
    instanceId: o.instanceId,
    producer: PROCESSORS_PRODUCER,
    stop: halt,
    // a fenced commit ends this replay (rebuildStore starts another): never dropped, as the processors drop theirs
    isCommitRejected: () => false,
    onIdleProbe: (p: () => Promise<boolean>) => void probes.push(p),
  };
  const totals = { trials: 0 };
  // every replay group starts at offset 0: its first lag is all it has to read
  const firstLag = new Map<EventConsumer, number>();
  let read = 0;
  const report = async () => {
    let remaining = 0;
    for (const c of consumers) {
      const lag = (await c.lag().catch(() => [])).reduce((n, l) => n + Math.max(0, l.lag), 0);
      if (!firstLag.has(c)) firstLag.set(c, lag);
      remaining += lag;
    }
    const total = [...firstLag.values()].reduce((a, b) => a + b, 0);
    read = Math.max(0, total - remaining);
    o.onProgress?.(read, total);
  };
  const progress = setInterval(() => void report(), 250);
  try {
    await lastValueFrom(
      merge(
        trialTopology(
          { source, publisher: nowhere, sink: storeTrialSink(sink), deadLetter: conflictLetters(o.log, sink) },
          {
            ...common,
            groupId: groupOf(TOPICS.trials),
            partitionOf,
            restoreFromChangelog: false,
            // the replay stops once caught up: its last unit closes at the end of the log, not at the window
            closeUnitsWhenCaughtUp: true,
            ...(o.minAttempts ? { minAttempts: o.minAttempts } : {}),
            ...(o.maxWaitMs !== undefined ? { maxWaitMs: o.maxWaitMs } : {}),
          },
        ).pipe(tap((u) => void (totals.trials += u.trials))),
        ...COPIED.map((topic) =>
          archiveTopology(
            { source, sink: storeEventSink(sink) },
            { ...common, topic, keep: KEPT, groupId: groupOf(topic) },
          ),
        ),
        // ingest's dead letters, from the DLQ (the processors' own are made again by the replay's consumers)
        ingestLetterTopology({ source, sink: storeIngestLetters(sink) }, { ...common, groupId: groupOf(TOPICS.dlq) }),
      ).pipe(ignoreElements()),
      { defaultValue: undefined },
    );
  } finally {
    clearInterval(progress);
    stop();
  }
  await report();
  read += await replayWindows(o.log, sink, `passk-rebuild-windows.${o.instanceId}`);
  const after = await storeDrift(o.log, o.store.client);
  if (after.damaged) {
    // the log itself gives these totals: say so once, and do not replay it again at every start
    await sink.write('store_positions', ledgerRows([markerOf(after.totals, after.trialsCommitted)]));
    await sink.flush();
  }
  return { records: read, trials: totals.trials, after: { ...after, known: after.damaged } };
};

/**
 * Production windows again, as the gate processor summed them. The window processor's snapshots
 * (`TraceWindowsUpdated`: one source partition of passk.traces at a position, its shares of the windows it keeps)
 * are read from passk.rowstate; the replay's order across partitions is not the live one, so instead of summing the
 * latest snapshots as they come, it keeps each partition's last share of each window (a share's seq grows) and
 * whether the partition closed it (a snapshot whose watermark passed the window's end while still keeping it), and
 * sums those (`totalOf`, the live gate's step): the total the live gate wrote last, the one the store keeps (highest
 * seq). On the embedded log the changelog keeps every snapshot; Kafka compacts passk.rowstate to the latest snapshot
 * per partition, so there a window that snapshot no longer holds (past the 24 h horizon) is not made again. Returns
 * the records read.
 */
export const replayWindows = async (source: EventSource, sink: ClickHouseRowSink, groupId: string): Promise<number> => {
  /** Per source partition: its last snapshot's position, its snapshots' (watermark, horizon), its last shares. */
  const parts = new Map<
    number,
    { through: number; marks: [number, number][]; shares: Map<string, WindowShareRecord> }
  >();
  let partitions = 0;
  const read = await readToEnd(source, {
    topic: TOPICS.rowstate,
    groupId,
    onEvent: (e) => {
      if (e.type !== 'TraceWindowsUpdated') return;
      let p = parts.get(e.source_partition);
      if (!p) parts.set(e.source_partition, (p = { through: -1, marks: [], shares: new Map() }));
      if (p.through >= e.through_offset) return; // an older snapshot (a redelivery): the live gate skips it too
      p.through = e.through_offset;
      partitions = Math.max(partitions, e.source_partitions);
      p.marks.push([e.watermark, e.horizon]);
      for (const share of e.shares) p.shares.set(windowKeyOf(share), share);
    },
  });
  /** Did partition `p` close a window ending at `end`: a snapshot past the end that still kept it (watermarks grow). */
  const closedBy = (p: number, end: number): boolean => {
    const marks = parts.get(p)?.marks ?? [];
    let lo = 0;
    let hi = marks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (marks[mid]![0] >= end) hi = mid;
      else lo = mid + 1;
    }
    return lo < marks.length && marks[lo]![1] <= end;
  };
  const keys = new Set<string>();
  for (const p of parts.values()) for (const key of p.shares.keys()) keys.add(key);
  const totals: WindowTotal[] = [];
  for (const key of keys) {
    // one snapshot per partition as totalOf reads it: the partition's last share, closed or not at the window's end
    let end = 0;
    const snapshots = new Map<number, TraceWindowsUpdated>();
    for (const p of parts.values()) {
      const share = p.shares.get(key);
      if (share) end = share.start + share.size_ms;
    }
    for (let n = 0; n < partitions; n++) {
      const share = parts.get(n)?.shares.get(key);
      const closed = closedBy(n, end);
      snapshots.set(n, {
        event_id: '',
        type: 'TraceWindowsUpdated',
        occurred_at: 0,
        producer: '',
        source_partition: n,
        source_partitions: partitions,
        through_offset: 0,
        watermark: closed ? end : Number.MIN_SAFE_INTEGER,
        horizon: closed ? end : Number.MAX_SAFE_INTEGER,
        shares: share ? [share] : [],
      } as TraceWindowsUpdated);
    }
    const total = totalOf(key, snapshots);
    if (total) totals.push(total);
  }
  if (totals.length > 0) await storeEventSink(sink).writeWindows(totals);
  return read;
};
