import type { EventSource } from '../../processors/ports.ts';
import type { ConfirmationRequested } from '../../schemas/events/comparisons.ts';
import { InputError } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { readLog } from '../logReader.ts';
import { recordedAttempts } from './resume.ts';
import { executeRun, pickRows, withPreparedRun, type RunDatasetDeps, type RunOptions } from './runDataset.ts';
import { attemptKey, plannedAttempts, type RunSummary } from './runTrials.ts';

/**
 * Acting on the processors' confirmation requests. The gates processor emits one `ConfirmationRequested`
 * per comparison with suspected regressions: run both versions again on those rows, `attempts` graded
 * attempts each, under the request's run id (it starts with `confirm`, so report and gate count them as
 * confirmation attempts). The runner runs one agent version at a time, so each version's runner does its
 * share. Nothing is kept besides the log: what a request still needs is what the log does not yet hold
 * (graded attempts of its run id for this version), so a rerun, or a run killed midway and restarted, does
 * exactly the rest, and a request whose gate is decided needs nothing more.
 */

export interface ConfirmationScope {
  readonly suite: string;
  readonly datasetVersion: string;
  readonly agentVersion: string;
}

/** A request for this agent version that does not match the dataset file given, so it was not run. */
export interface RequestElsewhere {
  readonly request: ConfirmationRequested;
  readonly why: string;
}

/** Requests for an agent version, from passk.decisions: those still open, and those decided (their gate is out). */
export const confirmationRequests = async (
  source: EventSource,
  agentVersion: string,
): Promise<{ open: ConfirmationRequested[]; decided: ConfirmationRequested[] }> => {
  const requests = new Map<string, ConfirmationRequested>();
  const gated = new Set<string>();
  await readLog(source, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (
      e.type === 'ConfirmationRequested' &&
      (e.baseline === agentVersion || e.candidate === agentVersion) &&
      !requests.has(e.event_id)
    )
      requests.set(e.event_id, e);
    else if (e.type === 'GateEvaluated') gated.add(e.gate_id);
  });
  const all = [...requests.values()].sort(
    (a, b) => a.occurred_at - b.occurred_at || a.comparison_id.localeCompare(b.comparison_id),
  );
  return {
    open: all.filter((r) => !gated.has(r.comparison_id)),
    decided: all.filter((r) => gated.has(r.comparison_id)),
  };
};

/** Why a request is not for this dataset file (another suite or dataset version), or undefined when it is. */
export const mismatch = (r: ConfirmationRequested, s: ConfirmationScope): string | undefined => {
  if (r.suite !== s.suite) return `suite ${r.suite}, not ${s.suite} (pass --suite ${r.suite})`;
  if (r.dataset_version !== s.datasetVersion)
    return `dataset version ${r.dataset_version}, not ${s.datasetVersion} (pass --dataset-version ${r.dataset_version})`;
  return undefined;
};

/**
 * Attempts to add per row so that each row reaches `attempts` graded ones: an ungraded attempt (an
 * infrastructure failure) does not count for the gate, so each one recorded earns a replacement.
 */
export const topUp = (
  rows: readonly string[],
  attempts: number,
  recorded: ReadonlyMap<string, boolean | null>,
  keyOf: (row: string, attempt: number) => string,
): Map<string, number> => {
  const more = new Map<string, number>();
  for (const row of rows) {
    let ungraded = 0;
    // the planned attempts grow by one per ungraded one, so look as far as they now reach
    for (let a = 0; a < attempts + ungraded; a++) if (recorded.get(keyOf(row, a)) === null) ungraded++;
    if (ungraded > 0) more.set(row, ungraded);
  }
  return more;
};

const nothingToRun = (runId: string, recorded: number): RunSummary => ({
  runId,
  status: 'completed',
  total: recorded,
  skipped: recorded,
  done: 0,
  passed: 0,
  failed: 0,
  ungraded: 0,
  retries: 0,
  wallMs: 0,
  costUsd: 0,
  tokens: { input: 0, output: 0 },
  errors: {},
  messages: {},
});

export interface ConfirmationRun {
  readonly comparisonId: string;
  readonly runId: string;
  readonly rows: readonly string[];
  /** Graded attempts requested per row. */
  readonly attempts: number;
  readonly summary: RunSummary;
}

export interface ConfirmationsSummary {
  readonly agentVersion: string;
  readonly suite: string;
  readonly datasetVersion: string;
  /** One per open request for this version and dataset, in request order (those already done ran nothing). */
  readonly runs: readonly ConfirmationRun[];
  /** Open requests for this version on another suite or dataset version. */
  readonly elsewhere: readonly RequestElsewhere[];
  /** Requests whose gate is already decided: nothing to run. */
  readonly decided: number;
  readonly status: 'completed' | 'partial';
}

/**
 * `passk run --confirmations`: reads the open confirmation requests for the agent's version from the log
 * and runs, for each, exactly the attempts it still needs, under its run id; then stops.
 */
export const runConfirmations = async (
  opts: RunOptions,
  deps: RunDatasetDeps & { readonly onRequest?: (r: ConfirmationRequested) => void },
): Promise<ConfirmationsSummary> => {
  const source = deps.source;
  if (!source)
    throw new InputError('confirmation requests are read from the event log: none is configured', {
      field: 'confirmations',
    });
  return withPreparedRun(opts, async (p) => {
    const scope = { suite: p.suite, datasetVersion: p.datasetVersion, agentVersion: p.agentVersion };
    const { open, decided } = await confirmationRequests(source, p.agentVersion);
    const elsewhere = open.flatMap((request) => {
      const why = mismatch(request, scope);
      return why ? [{ request, why }] : [];
    });
    const mine = open.filter((r) => !mismatch(r, scope));
    // every requested row must be in the dataset file before anything runs
    const rowsOf = new Map(mine.map((r) => [r.event_id, pickRows(p, r.rows)]));
    const runs: ConfirmationRun[] = [];
    for (const request of mine) {
      if (deps.signal?.aborted) break;
      deps.onRequest?.(request);
      const identity = {
        suite: p.suite,
        dataset_version: p.datasetVersion,
        run_id: request.run_id,
        agent: { version: p.agentVersion },
      };
      const recorded = await recordedAttempts(source, identity);
      // must-not-break rows may be asked more attempts: planned after the request's `attempts`, like replacements
      const mnb = request.must_not_break;
      const tagged = new Set(mnb?.rows ?? []);
      const others = request.rows.filter((r) => !tagged.has(r));
      const moreAttempts = topUp(others, request.attempts, recorded, attemptKey);
      if (mnb) {
        const replacements = topUp(mnb.rows, mnb.attempts, recorded, attemptKey);
        for (const row of mnb.rows)
          moreAttempts.set(row, mnb.attempts - request.attempts + (replacements.get(row) ?? 0));
      }
      const run = {
        runId: request.run_id,
        rows: rowsOf.get(request.event_id)!,
        k: request.attempts,
        moreAttempts,
        recorded,
      };
      const planned = plannedAttempts(run);
      // already done (a rerun): publish nothing at all, not even the run's RunFinished again
      const summary = planned.every(({ row, attempt }) => recorded.has(attemptKey(row.id, attempt)))
        ? nothingToRun(request.run_id, planned.length)
        : await executeRun(p, run, { ...opts, resume: true }, deps);
      runs.push({
        comparisonId: request.comparison_id,
        runId: request.run_id,
        rows: request.rows,
        attempts: request.attempts,
        summary,
      });
    }
    const status =
      runs.length === mine.length && runs.every((r) => r.summary.status === 'completed') ? 'completed' : 'partial';
    return {
      agentVersion: p.agentVersion,
      suite: p.suite,
      datasetVersion: p.datasetVersion,
      runs,
      elsewhere,
      decided: decided.length,
      status,
    };
  });
};
