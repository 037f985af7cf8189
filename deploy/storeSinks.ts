import { exhaustMap, filter, ignoreElements, interval, lastValueFrom, merge, scan, take } from 'rxjs';
import { stopped$ } from '../processors/operators/onStop.ts';
import type { EventSink, TrialSink } from '../processors/index.ts';
import type { WindowTotal } from '../processors/folds/windowTotals.ts';
import type { PasskEvent } from '../schemas/events/index.ts';
import type { WindowAlertRaised } from '../schemas/events/windowAlertRaised.ts';
import type { ClickHouseRowSink } from '../sinks/clickhouse/index.ts';
import { writeTrialUnit } from '../sinks/clickhouse/trialSink.ts';
import { toDateTime64 } from '../sinks/clickhouse/time.ts';
import { PRODUCER_VERSION } from '../producers/version.ts';
import type { DeadLetter, EventLog, EventSource } from '../processors/ports.ts';

/** What the processors write to the store, shared by `startProcessors` and the store's rebuild. */

/** `producer` of everything the processors emit: part of the changelog's bytes, so a replay reproduces them. */
export const PROCESSORS_PRODUCER = `passk-processors/${PRODUCER_VERSION}`;

/** The trial topology's sink: raw trials, row states, finished runs and version snapshots, durable when the promise resolves. */
export const storeTrialSink = (sink: ClickHouseRowSink): TrialSink => ({
  writeTrials: (unit) => writeTrialUnit(sink, unit),
});
/**
 * The trial topology's dead letters (trials conflicting with a slot's first answer): appended to the log's DLQ
 * and, with a store, to its `dead_letters` (stage 'conflict'), durably, once per source position.
 */
export const conflictLetters =
  (log: EventLog, sink: ClickHouseRowSink | undefined, counted?: (n: number) => void) =>
  async (letters: readonly DeadLetter[]): Promise<void> => {
    counted?.(await log.publisher.publishDeadLetters(letters)); // the letters new to the DLQ
    if (!sink) return;
    await sink.writeDeadLetters(letters, 'conflict');
    await sink.flush();
  };

/** The letters `passk ingest` appended to the DLQ, as the follower of that topic stores them (stage 'ingest'). */
export const storeIngestLetters = (sink: ClickHouseRowSink) => ({
  writeDeadLetters: async (letters: readonly DeadLetter[]): Promise<void> => {
    await sink.writeDeadLetters(letters, 'ingest');
    await sink.flush();
  },
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
export const STORED = new Set<PasskEvent['type']>([
  'TrialRecorded',
  'TraceSampled',
  'DatasetRowUpserted',
  'FailureConfirmed',
  'GateEvaluated',
  'RowStateChanged',
  'RunFinished',
  'RunRetracted',
  'JudgmentRecorded',
  'LabelRecorded',
]);

/**
 * Polls every topology's idle probe; once all say idle twice in a row (nothing in flight, no lag,
 * the followed tables at their end), resolves. In a row: a round that is not idle starts the count
 * again (what one processor published between two rounds is another's lag in the next).
 */
export const allIdle = (probes: (() => Promise<boolean>)[], expected: number, stop: Promise<unknown>): Promise<void> =>
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

/**
 * Every consumer the processors open stores the records it dead-letters in the store's `dead_letters`
 * (stage 'decode', keyed by source position, so a replay or a second group stores nothing twice),
 * durably, before the batch around them can be committed.
 */
export const storingDeadLetters = (log: EventSource, sink: ClickHouseRowSink): EventSource => ({
  consumer: (options) =>
    log.consumer({
      ...options,
      onDeadLetters: async (letters) => {
        await options.onDeadLetters?.(letters);
        await sink.writeDeadLetters(letters);
        await sink.flush();
      },
    }),
  ...(log.readsByKey && { readsByKey: log.readsByKey }),
});
