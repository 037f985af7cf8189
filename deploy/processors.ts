import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { EMPTY, exhaustMap, filter, ignoreElements, interval, lastValueFrom, merge, scan, take, tap } from 'rxjs';
import { CommitRejected } from '../log/errors.ts';
import { partitionOf } from '../log/partitioner.ts';
import { stopped$ } from '../processors/operators/onStop.ts';
import type { EventConsumer, EventLog, EventSource } from '../processors/ports.ts';
import type { WindowTotal } from '../processors/folds/windowTotals.ts';
import type { PasskEvent } from '../schemas/events/index.ts';
import type { WindowAlertRaised } from '../schemas/events/windowAlertRaised.ts';
import { toDateTime64 } from '../sinks/clickhouse/time.ts';
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
import { PRODUCER_VERSION } from '../producers/version.ts';
import { writeTrialUnit, type ClickHouseRowSink } from '../sinks/clickhouse/index.ts';
import type { PasskConfig } from './config.ts';
import { archiveTopology, ARCHIVED } from '../processors/topologies/archive.ts';
import { openEventLog } from './eventLog.ts';
import { openStore, storeRowSink, type Store } from './store.ts';

/** `producer` of everything the processors emit: part of the changelog's bytes, so a replay reproduces them. */
export const PROCESSORS_PRODUCER = `passk-processors/${PRODUCER_VERSION}`;

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
  /** How the store is opened. @default openStore (tests wrap it to watch what the sink does) */
  readonly openStore?: (config: PasskConfig) => Promise<Store>;
}

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
    } satisfies EventSource,
  };
};

/** The trial topology's sink: raw trials, row states, finished runs and version snapshots, durable when the promise resolves. */
export const storeTrialSink = (sink: ClickHouseRowSink): TrialSink => ({
  writeTrials: (unit) => writeTrialUnit(sink, unit),
});
/** A production-window alert as a row of the store's `alerts` table. */
const alertRow = (a: WindowAlertRaised) => ({
  alert_id: a.alert_id,
  raised_at: toDateTime64(a.occurred_at),
  agent_version: a.agent_version,
  segment: a.segment,
  kind: 'production_below_offline',
  severity: a.p_value < 0.001 ? 'critical' : 'warning',
  message: a.message,
  window_start: toDateTime64(a.window.start),
  value: a.pass_rate,
  threshold: a.offline_pass_at_1,
});

/** A production window total as a row of `production_windows` (the highest seq of a window wins). */
const windowRow = (w: WindowTotal) => ({
  agent_version: w.agent_version,
  segment: w.segment,
  grader: w.grader,
  window_start: toDateTime64(w.start),
  window_end: toDateTime64(w.end),
  // every sampled trace of the window, graded or not; a window without a verdict has no pass rate (NULL, never 0)
  sampled: w.graded + w.ungraded,
  ungraded: w.ungraded,
  weight: w.w,
  passed_weight: w.wy,
  pass_rate: w.pass_rate,
  ci_low: w.interval?.[0] ?? null,
  ci_high: w.interval?.[1] ?? null,
  late: w.late,
  sampled_rule: 1,
  seq: w.seq,
});

export const storeEventSink = (sink: ClickHouseRowSink): EventSink => ({
  writeEvents: async (events) => {
    if (events.length === 0) return;
    const alerts = events.filter((e): e is WindowAlertRaised => e.type === 'WindowAlertRaised');
    const stored = events.filter((e) => STORED.has(e.type));
    if (stored.length > 0) await sink.writeEvents(stored);
    if (alerts.length > 0) await sink.write('alerts', alerts.map(alertRow));
    await sink.flush();
  },
  writeWindows: async (windows) => {
    await sink.write('production_windows', windows.map(windowRow));
    await sink.flush();
  },
});
/** Event types with a table of their own in the store; the processors' bookkeeping events have none. */
const STORED = new Set<PasskEvent['type']>([
  'TrialRecorded',
  'TraceSampled',
  'DatasetRowUpserted',
  'FailureConfirmed',
  'GateEvaluated',
  'RowStateChanged',
  'RunFinished',
  'JudgmentRecorded',
  'LabelRecorded',
]);
/**
 * Every consumer the processors open stores the records it dead-letters in the store's `dead_letters`
 * (stage 'decode', keyed by source position, so a replay or a second group stores nothing twice),
 * durably, before the batch around them can be committed.
 */
const storingDeadLetters = (log: EventSource, sink: ClickHouseRowSink): EventSource => ({
  consumer: (options) =>
    log.consumer({
      ...options,
      onDeadLetters: async (letters) => {
        await options.onDeadLetters?.(letters);
        await sink.writeDeadLetters(letters);
        await sink.flush();
      },
    }),
});
const noTrialSink: TrialSink = { writeTrials: async () => {} };
const noEventSink: EventSink = { writeEvents: async () => {}, writeWindows: async () => {} };

/**
 * Polls every topology's idle probe; once all say idle twice in a row (nothing in flight, no lag,
 * the followed tables at their end), resolves. In a row: a round that is not idle starts the count
 * again (what one processor published between two rounds is another's lag in the next).
 */
const allIdle = (probes: (() => Promise<boolean>)[], expected: number, stop: Promise<unknown>): Promise<void> =>
  lastValueFrom(
    merge(
      stopped$(stop),
      interval(100).pipe(
        exhaustMap(
          async () => probes.length === expected && (await Promise.all(probes.map((p) => p()))).every(Boolean),
        ),
        scan((inARow, idle) => (idle ? inARow + 1 : 0), 0),
        filter((inARow) => inARow >= 2),
      ),
    ).pipe(take(1), ignoreElements()),
    { defaultValue: undefined },
  );

/** Starts the processors against the configured backend: config → event log + store → topologies. */
export const startProcessors = async (
  config: PasskConfig,
  opts: StartProcessorsOptions = {},
): Promise<ProcessorsRun> => {
  const log = opts.log ?? (await openEventLog(config));
  let store: Store | undefined;
  let sink: ClickHouseRowSink | undefined;
  try {
    if (opts.store ?? true) {
      store = await (opts.openStore ?? openStore)(config);
      sink = storeRowSink(store);
    }
  } catch (e) {
    if (!opts.log) await log.close();
    throw e;
  }
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const only = new Set(opts.only ?? ALL_PROCESSORS);
  const probes: (() => Promise<boolean>)[] = [];
  // one idle probe per consumer group: the archive has one per topic it copies
  const groups = [...only].reduce((n, p) => n + (p === 'archive' ? (sink ? ARCHIVED.size : 0) : 1), 0);
  const halt = opts.untilCaughtUp ? allIdle(probes, groups, stopped) : stopped;
  const instanceId = opts.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const common = {
    instanceId,
    producer: PROCESSORS_PRODUCER,
    stop: halt,
    isCommitRejected: (e: unknown) => e instanceof CommitRejected,
    onIdleProbe: (p: () => Promise<boolean>) => void probes.push(p),
    ...(opts.maxBatch ? { maxBatch: opts.maxBatch } : {}),
  };
  const meter = metered(sink ? storingDeadLetters(log, sink) : log);
  const ports = {
    source: meter.source,
    publisher: log.publisher,
    sink: sink ? storeEventSink(sink) : noEventSink,
  };
  const totals = { records: 0, trials: 0, decisions: 0 };
  const trials$ = only.has('trials')
    ? trialTopology(
        { ...ports, sink: sink ? storeTrialSink(sink) : noTrialSink },
        {
          ...common,
          partitionOf,
          ...(opts.minAttempts ? { minAttempts: opts.minAttempts } : {}),
          maxWaitMs: opts.maxWaitMs ?? config.batchWindowMs,
          ...(opts.onAssignment ? { onAssignment: opts.onAssignment } : {}),
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
      }).pipe(decided)
    : EMPTY;
  const windows$ = only.has('windows')
    ? windowTopology(ports, {
        ...common,
        maxWaitMs: opts.maxWaitMs ?? config.batchWindowMs,
        ...(opts.allowedLatenessMs !== undefined ? { allowedLatenessMs: opts.allowedLatenessMs } : {}),
      }).pipe(decided)
    : EMPTY;
  const archive$ =
    only.has('archive') && sink
      ? merge(
          ...[...ARCHIVED.keys()].map((topic) =>
            archiveTopology({ source: ports.source, sink: storeEventSink(sink) }, { ...common, topic }),
          ),
        )
      : EMPTY;
  const done = lastValueFrom(merge(trials$, datasets$, gates$, windows$, archive$.pipe(ignoreElements())), {
    defaultValue: undefined,
  })
    .then(() => totals)
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
  return { stop, done, caughtUp, stats };
};
