import type { EventLog } from '../../processors/ports.ts';
import { InputError } from '../../schemas/errors.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import { deterministicEventId, newEventId } from '../../schemas/ids.ts';
import { KEY_SEP, TOPICS } from '../../schemas/topics.ts';
import { readLog } from '../logReader.ts';
import { PRODUCER_VERSION } from '../version.ts';

/** The run's trials on one row of one version, as the log holds them. */
export interface RunRow {
  readonly suite: string;
  readonly dataset_version: string;
  readonly agent_version: string;
  readonly row_id: string;
  trials: number;
  passed: number;
  failed: number;
  ungraded: number;
  /** A retraction of the run on this row is already in the log. */
  retracted?: { by: string; at: number; reason: string };
}

/** What a run left in the log: its trials per row, and the rows on which it is already retracted. */
export interface RunInLog {
  readonly run_id: string;
  readonly rows: RunRow[];
  /** Other suites that hold a run of this id (`--suite` picks one). */
  readonly suites: string[];
  /** A few run ids of the log, latest first: named when the run is not there. */
  readonly known: string[];
}

/**
 * Reads passk.trials for one run: its trials per (suite, dataset version, agent version, row), each
 * event id once, and the retractions already made. `suite` limits it to one suite.
 */
export const findRun = async (log: EventLog, runId: string, suite?: string): Promise<RunInLog> => {
  const rows = new Map<string, RunRow>();
  const seen = new Set<string>();
  const suites = new Set<string>();
  const latest = new Map<string, number>();
  const rowOf = (e: { suite: string; dataset_version: string; row_id: string }, agentVersion: string): RunRow => {
    const key = [e.suite, e.dataset_version, agentVersion, e.row_id].join(KEY_SEP);
    let r = rows.get(key);
    if (r === undefined)
      rows.set(
        key,
        (r = {
          suite: e.suite,
          dataset_version: e.dataset_version,
          agent_version: agentVersion,
          row_id: e.row_id,
          trials: 0,
          passed: 0,
          failed: 0,
          ungraded: 0,
        }),
      );
    return r;
  };
  await readLog(log, { topics: [TOPICS.trials] }, ({ event: e }) => {
    if (e.type === 'TrialRecorded') {
      latest.set(e.run_id, Math.max(latest.get(e.run_id) ?? 0, e.occurred_at));
      if (e.run_id !== runId) return;
      suites.add(e.suite);
      if ((suite !== undefined && e.suite !== suite) || seen.has(e.event_id)) return;
      seen.add(e.event_id);
      const r = rowOf(e, e.agent.version);
      r.trials++;
      if (e.passed === null) r.ungraded++;
      else if (e.passed) r.passed++;
      else r.failed++;
    } else if (e.type === 'RunRetracted' && e.run_id === runId && (suite === undefined || e.suite === suite)) {
      const r = rowOf(e, e.agent_version);
      r.retracted ??= { by: e.retracted_by, at: e.occurred_at, reason: e.reason };
    }
  });
  const known = [...latest.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([id]) => id);
  return {
    run_id: runId,
    rows: [...rows.values()].sort((a, b) =>
      [a.suite, a.agent_version, a.dataset_version, a.row_id].join(KEY_SEP) <
      [b.suite, b.agent_version, b.dataset_version, b.row_id].join(KEY_SEP)
        ? -1
        : 1,
    ),
    suites: [...suites].sort(),
    known,
  };
};

export interface RetractionInput {
  readonly reason: string;
  readonly by: string;
  /** Epoch ms. @default now */
  readonly at?: number;
}

/** One version of the run: what a retraction takes out of it. */
export interface RetractedVersion {
  readonly suite: string;
  readonly agent_version: string;
  readonly dataset_version: string;
  readonly rows: number;
  readonly trials: number;
  readonly passed: number;
  readonly failed: number;
  readonly ungraded: number;
}

/** The retraction of one run, planned: its events (one per row not yet retracted) and what they take out. */
export interface RetractionPlan {
  readonly retraction_id: string;
  readonly run_id: string;
  readonly reason: string;
  readonly retracted_by: string;
  readonly retracted_at: number;
  readonly versions: RetractedVersion[];
  readonly rows: number;
  readonly trials: number;
  readonly events: RunRetracted[];
}

/**
 * The retraction of a run found in the log. Refuses (InputError, field `--run`) a run the log does not
 * hold, a run id that several suites use without `--suite`, and a run already retracted on every row.
 */
export const planRetraction = (found: RunInLog, input: RetractionInput, suite?: string): RetractionPlan => {
  const reason = input.reason.trim();
  if (reason === '') throw new InputError('--reason needs a reason in words (it is kept with the retraction)');
  if (found.rows.length === 0) {
    const where = suite === undefined ? 'the event log' : `suite "${suite}" of the event log`;
    const others =
      suite !== undefined && found.suites.length > 0 ? `; suites with this run: ${found.suites.join(', ')}` : '';
    const known = found.known.length > 0 ? `; latest runs: ${found.known.join(', ')}` : '';
    throw new InputError(`no run "${found.run_id}" in ${where}${others}${known}`, { field: '--run' });
  }
  const suites = [...new Set(found.rows.map((r) => r.suite))];
  if (suite === undefined && suites.length > 1)
    throw new InputError(
      `run "${found.run_id}" is in ${suites.length} suites (${suites.join(', ')}): name one with --suite`,
      {
        field: '--suite',
      },
    );
  const open = found.rows.filter((r) => r.retracted === undefined);
  if (open.length === 0) {
    const r = found.rows[0]!.retracted!;
    throw new InputError(
      `run "${found.run_id}" is already retracted (by ${r.by} at ${new Date(r.at).toISOString()}: ${r.reason})`,
      { field: '--run' },
    );
  }
  const at = input.at ?? Date.now();
  const retraction_id = newEventId(at);
  const producer = `passk-cli/${PRODUCER_VERSION}`;
  const events: RunRetracted[] = open.map((r) => ({
    event_id: deterministicEventId(
      at,
      'RunRetracted',
      retraction_id,
      r.suite,
      r.dataset_version,
      r.agent_version,
      r.row_id,
    ),
    type: 'RunRetracted',
    schema_version: 1,
    occurred_at: at,
    producer,
    retraction_id,
    run_id: found.run_id,
    suite: r.suite,
    dataset_version: r.dataset_version,
    agent_version: r.agent_version,
    row_id: r.row_id,
    reason,
    retracted_by: input.by,
    trials: r.trials,
  }));
  const versions = new Map<string, RetractedVersion & { rows: number }>();
  for (const r of open) {
    const key = [r.suite, r.agent_version, r.dataset_version].join(KEY_SEP);
    const v = versions.get(key) ?? {
      suite: r.suite,
      agent_version: r.agent_version,
      dataset_version: r.dataset_version,
      rows: 0,
      trials: 0,
      passed: 0,
      failed: 0,
      ungraded: 0,
    };
    versions.set(key, {
      ...v,
      rows: v.rows + 1,
      trials: v.trials + r.trials,
      passed: v.passed + r.passed,
      failed: v.failed + r.failed,
      ungraded: v.ungraded + r.ungraded,
    });
  }
  return {
    retraction_id,
    run_id: found.run_id,
    reason,
    retracted_by: input.by,
    retracted_at: at,
    versions: [...versions.values()],
    rows: open.length,
    trials: open.reduce((s, r) => s + r.trials, 0),
    events,
  };
};

/** Finds the run in the log, plans its retraction and (unless `dryRun`) publishes it. */
export const retractRun = async (
  log: EventLog,
  opts: RetractionInput & { readonly runId: string; readonly suite?: string; readonly dryRun?: boolean },
): Promise<RetractionPlan> => {
  const plan = planRetraction(await findRun(log, opts.runId, opts.suite), opts, opts.suite);
  if (!opts.dryRun) await log.publisher.publish(plan.events);
  return plan;
};
