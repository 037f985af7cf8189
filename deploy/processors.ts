import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { EMPTY, ignoreElements, lastValueFrom, merge, tap } from 'rxjs';
import { CommitRejected } from '../log/errors.ts';
import { partitionOf } from '../log/partitioner.ts';
import type { EventConsumer, EventLog, EventSource } from '../processors/ports.ts';
import {
  datasetTopology,
  gateTopology,
  trialTopology,
  windowTopology,
  type DecisionProgress,
  type EventSink,
  type TrialProgress,
  type TrialSink,
  type TrialTopologyOptions,
} from '../processors/index.ts';
import type { ClickHouseRowSink } from '../sinks/clickhouse/index.ts';
import type { PasskConfig } from './config.ts';
import { archiveTopology, ARCHIVED } from '../processors/topologies/archive.ts';
import { ingestLetterTopology } from '../processors/topologies/ingestLetters.ts';
import { createRowstateFeed } from '../processors/operators/rowstateFeed.ts';
import type { ReportedSummary } from '../processors/folds/versionSummary.ts';
import { openEventLog } from './eventLog.ts';
import { ledgered, needsRebuild, rebuildStore, storeDrift, type RebuildResult, type StoreDrift } from './rebuild.ts';
import { openStore, storeFailure, storeRowSink, type Store } from './store.ts';
import {
  allIdle,
  conflictLetters,
  PROCESSORS_PRODUCER,
  storeEventSink,
  storeIngestLetters,
  storeTrialSink,
  storingDeadLetters,
} from './storeSinks.ts';

export { PROCESSORS_PRODUCER, storeEventSink, storeTrialSink } from './storeSinks.ts';

export type ProcessorName = 'trials' | 'datasets' | 'gates' | 'windows' | 'archive';
export const ALL_PROCESSORS: readonly ProcessorName[] = ['trials', 'datasets', 'gates', 'windows', 'archive'];

export interface StartProcessorsOptions {
  /** Stop once every consumer's lag is zero and everything is durable (`passk process --until-caught-up`). */
  readonly untilCaughtUp?: boolean;
  /** Write to the configured store (chDB in `<dataDir>/store`, or a ClickHouse server). @default true */
  readonly store?: boolean;
  /** An event log already open (tests); otherwise the configured one is opened and closed here. */
  readonly log?: EventLog;
  /** Unique per process. @default host-pid-random */
  readonly instanceId?: string;
  /** Which topologies to run. @default all */
  readonly only?: readonly ProcessorName[];
  /** Graded attempts before a row is classified. @default 3 */
  readonly minAttempts?: number;
  readonly maxBatch?: number;
  /** The batching window. @default config.batchWindowMs */
  readonly maxWaitMs?: number;
  readonly onProgress?: (p: TrialProgress) => void;
  readonly onDecision?: (p: DecisionProgress) => void;
  readonly onAssignment?: TrialTopologyOptions['onAssignment'];
  /** How late (event time) a trace may arrive and still count in its window. @default 300000 */
  readonly allowedLatenessMs?: number;
  /**
   * At start, compare the store's ledger with the log (`storeDrift`) and, when the store lacks what the log
   * committed or lost a part, rebuild it by replaying the log before processing. @default true
   */
  readonly rebuild?: boolean;
  /** Told when a rebuild starts (why), how far it is, and when it ends. */
  readonly onRebuild?: (e: RebuildEvent) => void;
  /** How the store is opened. @default openStore (tests wrap it to watch what the sink does) */
  readonly openStore?: (config: PasskConfig) => Promise<Store>;
  /**
   * Reads the run's event log once the run has ended well, before the log is closed (the adaptive rounds of `passk
   * process`'s summary): the same read on a log opened again cost the end of every Kafka run a second open of the
   * log (the registry, the clients' connections: 0.3–0.4 s of wall at 30,000 trials, docs/performance.md). Its
   * rejection is `done`'s. Not called when the run failed.
   */
  readonly atEnd?: (log: EventLog) => Promise<void>;
}

export type RebuildEvent =
  | { readonly kind: 'start'; readonly drift: StoreDrift }
  | { readonly kind: 'progress'; readonly done: number; readonly total: number }
  | { readonly kind: 'done'; readonly result: RebuildResult };

export interface ProcessorsRun {
  /** Stops pulling, makes what is in flight durable, commits it, closes; `done` resolves after. */
  stop(): void;
  /**
   * Resolves once everything published before the call is processed, durable and committed (every
   * idle probe says so twice in a row), or once the run stops. The processors keep running: a long-lived
   * run can wait for this again and again (the demo, between its stages).
   */
  caughtUp(): Promise<void>;
  readonly done: Promise<{ records: number; trials: number; decisions: number }>;
  /** What the run has done so far, and its consumers' lag now (`GET /metrics` of serve and process). */
  readonly stats: () => Promise<ProcessorStats>;
  /**
   * The versions of the rows this run holds (restored and folded), as `passk report` counts them; none without the
   * trial topology. Also after a run with nothing new to fold: its rows are those it restored. `rounds`: the adaptive
   * runs' first stages from their rounds (`readAdaptiveRounds`), else the default `--first-k`.
   */
  readonly reported: (rounds?: ReadonlyMap<string, number>) => ReportedSummary[];
}

export interface ProcessorStats {
  readonly records: number;
  readonly trials: number;
  readonly decisions: number;
  readonly deadLetters: number;
  /** Records published and not yet processed, summed over the consumers' partitions. */
  readonly lag: number;
}

/** Keeps the consumers a source hands out (for their lag) and counts their dead letters. */
const metered = (source: EventSource) => {
  const consumers = new Set<EventConsumer>();
  const counts = { deadLetters: 0 };
  return {
    counts,
    lag: async () => {
      let n = 0;
      for (const c of consumers) for (const l of await c.lag().catch(() => [])) n += Math.max(0, l.lag);
      return n;
    },
    source: {
      consumer: async (options) => {
        const c = await source.consumer({
          ...options,
          onDeadLetters: async (letters) => {
            counts.deadLetters += letters.length;
            await options.onDeadLetters?.(letters);
          },
        });
        consumers.add(c);
        const close = c.close.bind(c);
        return Object.assign(c, { close: () => (consumers.delete(c), close()) });
      },
      ...(source.rowstateOutline && { rowstateOutline: source.rowstateOutline.bind(source) }),
      ...(source.readsByKey && { readsByKey: source.readsByKey }),
    } satisfies EventSource,
  };
};

/**
 * Records per durable unit of the trial topology on Kafka when the run stops once caught up (`passk process
 * --until-caught-up`: a backlog, where only the end counts). A unit writes one changelog record and one `row_state`
 * row per row it changed, however many of the row's trials it folded, so larger units coalesce more of each row's
 * trials (30,000 trials over 10,000 rows at 3 attempts: 20–23k changelog records at 5,000, 10–12.5k at 20,000;
 * passk's CPU about −20%, docs/performance.md). Elsewhere the topology's default, 5,000, stays: on the embedded log a
 * unit is one SQLite write transaction that other processes' appends wait behind, and a live processor's window
 * timer may not fire while a fetched batch is handed over in one burst of microtasks, so the row cap is what bounds
 * how long a unit's records wait to be durable and committed. Pulled and not committed: two units.
 */
export const KAFKA_UNIT_ROWS = 20_000;

const noTrialSink: TrialSink = { writeTrials: async () => {} };
const noEventSink: EventSink = { writeEvents: async () => {}, writeWindows: async () => {} };

/** Starts the processors against the configured backend: config → event log + store → topologies. */
export const startProcessors = async (
  config: PasskConfig,
  opts: StartProcessorsOptions = {},
): Promise<ProcessorsRun> => {
  // The log and the store are opened at the same time: neither needs the other, and each takes seconds at a start
  // (the registry and the clients' connections; chDB and, on a new store, its migrations: 2 s of DDL at load 20).
  // One that fails is thrown (the log's first, as when they were opened one after the other); the other is closed.
  const [opened, openedStore] = await Promise.allSettled([
    opts.log ? Promise.resolve(opts.log) : openEventLog(config),
    (opts.store ?? true) ? (opts.openStore ?? openStore)(config) : Promise.resolve(undefined),
  ]);
  if (opened.status === 'rejected' || openedStore.status === 'rejected') {
    if (opened.status === 'fulfilled' && !opts.log) await opened.value.close().catch(() => {});
    if (openedStore.status === 'fulfilled') await openedStore.value?.close().catch(() => {});
    throw opened.status === 'rejected' ? opened.reason : (openedStore as PromiseRejectedResult).reason;
  }
  const log = opened.value;
  const store: Store | undefined = openedStore.value;
  const sink: ClickHouseRowSink | undefined = store ? storeRowSink(store) : undefined;
  const instanceId = opts.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  if (store && sink && (opts.rebuild ?? true)) {
    try {
      const drift = await storeDrift(log, store.client);
      if (needsRebuild(drift)) {
        opts.onRebuild?.({ kind: 'start', drift });
        const result = await rebuildStore({
          log,
          store,
          instanceId,
          ...(opts.minAttempts ? { minAttempts: opts.minAttempts } : {}),
          maxWaitMs: opts.maxWaitMs ?? config.batchWindowMs,
          onProgress: (done, total) => opts.onRebuild?.({ kind: 'progress', done, total }),
        });
        opts.onRebuild?.({ kind: 'done', result });
      }
    } catch (e) {
      await sink.close().catch(() => {});
      await store.close().catch(() => {});
      if (!opts.log) await log.close();
      throw storeFailure(config, e);
    }
  }
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const only = new Set(opts.only ?? ALL_PROCESSORS);
  const probes: (() => Promise<boolean>)[] = [];
  // one idle probe per consumer group: the archive has one per topic it copies
  // one idle probe per consumer group: the archive has one per topic it copies, and the follower of the DLQ
  const groups = [...only].reduce((n, p) => n + (p === 'archive' ? (sink ? ARCHIVED.size + 1 : 0) : 1), 0);
  const halt = opts.untilCaughtUp ? allIdle(probes, groups, stopped) : stopped;
  const common = {
    instanceId,
    producer: PROCESSORS_PRODUCER,
    stop: halt,
    isCommitRejected: (e: unknown) => e instanceof CommitRejected,
    onIdleProbe: (p: () => Promise<boolean>) => void probes.push(p),
    ...(opts.maxBatch ? { maxBatch: opts.maxBatch } : {}),
  };
  // with a store, every group's commit first records its positions in the store's ledger (deploy/rebuild.ts)
  const meter = metered(sink ? ledgered(storingDeadLetters(log, sink), sink) : log);
  const ports = {
    source: meter.source,
    publisher: log.publisher,
    sink: sink ? storeEventSink(sink) : noEventSink,
  };
  const totals = { records: 0, trials: 0, decisions: 0 };
  // the gates take the row table from this process's writers of passk.rowstate, not back through the log
  const rowstate =
    only.has('trials') && only.has('windows') && only.has('gates')
      ? { rowstate: createRowstateFeed({ writers: ['trials', 'windows'] }) }
      : {};
  let rows: (rounds?: ReadonlyMap<string, number>) => ReportedSummary[] = () => [];
  const trials$ = only.has('trials')
    ? trialTopology(
        {
          ...ports,
          sink: sink ? storeTrialSink(sink) : noTrialSink,
          deadLetter: conflictLetters(log, sink, (n) => (meter.counts.deadLetters += n)),
        },
        {
          ...common,
          partitionOf,
          ...(opts.minAttempts ? { minAttempts: opts.minAttempts } : {}),
          maxWaitMs: opts.maxWaitMs ?? config.batchWindowMs,
          ...(config.backend === 'kafka' && opts.untilCaughtUp
            ? { maxRows: KAFKA_UNIT_ROWS, maxInFlight: 2 * KAFKA_UNIT_ROWS }
            : {}),
          // the last unit of a run that stops once caught up is not held for the window
          ...(opts.untilCaughtUp ? { closeUnitsWhenCaughtUp: true } : {}),
          ...(opts.onAssignment ? { onAssignment: opts.onAssignment } : {}),
          ...rowstate,
          onRows: (reported) => (rows = reported),
        },
      ).pipe(
        tap((p) => {
          totals.records += p.records;
          totals.trials += p.trials;
          opts.onProgress?.(p);
        }),
      )
    : EMPTY;
  const decided = tap((p: DecisionProgress) => {
    totals.decisions += p.emitted.length;
    opts.onDecision?.(p);
  });
  const datasets$ = only.has('datasets') ? datasetTopology(ports, common).pipe(decided) : EMPTY;
  const gates$ = only.has('gates')
    ? gateTopology(ports, {
        ...common,
        partitionOf,
        ...(opts.minAttempts ? { minAttempts: opts.minAttempts } : {}),
        snapshotEvery: config.gateSnapshotEvery,
        snapshotBytes: config.maxEventBytes,
        horizonMs: Math.round(config.gateHorizonDays * 86_400_000),
        idHorizonMs: Math.round(config.gateIdHorizonDays * 86_400_000),
        ...(config.gateEvictIdleDays > 0 ? { evictIdleMs: Math.round(config.gateEvictIdleDays * 86_400_000) } : {}),
        ...rowstate,
      }).pipe(decided)
    : EMPTY;
  const windows$ = only.has('windows')
    ? windowTopology(ports, {
        ...common,
        maxWaitMs: opts.maxWaitMs ?? config.batchWindowMs,
        ...(opts.allowedLatenessMs !== undefined ? { allowedLatenessMs: opts.allowedLatenessMs } : {}),
        ...rowstate,
      }).pipe(decided)
    : EMPTY;
  const archive$ =
    only.has('archive') && sink
      ? merge(
          ...[...ARCHIVED.keys()].map((topic) =>
            archiveTopology({ source: ports.source, sink: storeEventSink(sink) }, { ...common, topic }),
          ),
          ingestLetterTopology({ source: ports.source, sink: storeIngestLetters(sink) }, common),
        )
      : EMPTY;
  const done = lastValueFrom(merge(trials$, datasets$, gates$, windows$, archive$.pipe(ignoreElements())), {
    defaultValue: undefined,
  })
    .then(
      () => totals,
      // a full disk while processing: one line naming the store (exit 3), the unit uncommitted
      (e: unknown) => Promise.reject(storeFailure(config, e)),
    )
    .then(async (t) => {
      await opts.atEnd?.(log);
      return t;
    })
    .finally(async () => {
      await sink?.close().catch(() => {});
      await store?.close().catch(() => {});
      if (!opts.log) await log.close();
    });
  // caughtUp() also gives up when the run ends on its own (an error): then it rethrows that error
  let failure: { error: unknown } | undefined;
  const ended = Promise.race([
    stopped,
    done.then(
      () => {},
      (error: unknown) => void (failure = { error }),
    ),
  ]);
  const caughtUp = async () => {
    await allIdle(probes, groups, ended);
    if (failure) throw failure.error;
  };
  const stats = async (): Promise<ProcessorStats> => ({
    ...totals,
    deadLetters: meter.counts.deadLetters,
    lag: await meter.lag(),
  });
  return { stop, done, caughtUp, stats, reported: (rounds) => rows(rounds) };
};
