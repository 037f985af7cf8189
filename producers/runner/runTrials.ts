import type { Recorder } from '../sdk/recorder.ts';
import { trialEventId } from '../sdk/ids.ts';
import type { TrialInput } from '../sdk/inputs.ts';
import type { RetryPolicy } from '../../schemas/retry.ts';
import type { Agent } from './agents/types.ts';
import type { DatasetRow } from './dataset.ts';
import type { Grader } from './graders/types.ts';
import { runTrial } from './trial.ts';
import { KEY_SEP } from '../../schemas/topics.ts';

export interface RunPlan {
  readonly rows: readonly DatasetRow[];
  readonly identity: Pick<TrialInput, 'suite' | 'dataset_id' | 'dataset_version' | 'run_id' | 'agent'>;
  /** Attempts per row. */
  readonly k: number;
  /** Confirmation runs: extra attempts (numbered from k on) for these rows. */
  readonly confirm?: { readonly rows: readonly string[]; readonly extra: number };
  /**
   * More attempts for some rows, numbered after the others: requested confirmations top up a row by one
   * attempt per ungraded one already recorded, so the gate gets the graded attempts it waits for.
   */
  readonly moreAttempts?: ReadonlyMap<string, number>;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  /**
   * When the first this many trials (or all of them, if fewer) are all ungraded with the same error kind, the
   * run stops scheduling: the agent is broken, not wrong, and the rest of the budget would go the same way.
   * 0 = never stop. @default 5
   */
  readonly stopAfter?: number;
  /** The dataset file and agent spec as `passk run` was given them, recorded on RunFinished. */
  readonly source?: { readonly dataset_path: string; readonly agent_spec: string };
  /** Publish the run's RunFinished at the end. An adaptive run's rounds each run a plan and mark it once. @default true */
  readonly finish?: boolean;
}

export interface RunDeps {
  readonly agent: Agent;
  readonly grader: Grader;
  readonly recorder: Recorder;
  /** Attempts this run already recorded (read from the log), by `attemptKey`, with their verdicts: they are skipped. */
  readonly recorded?: ReadonlyMap<string, boolean | null>;
  readonly clock?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly onProgress?: (p: RunProgress) => void;
  /** Stops scheduling new trials; those in flight finish and are recorded, and the run is marked partial. */
  readonly signal?: AbortSignal;
}

export interface RunProgress {
  readonly total: number;
  readonly skipped: number;
  readonly done: number;
  readonly passed: number;
  readonly failed: number;
  readonly ungraded: number;
}

export interface RunSummary extends RunProgress {
  readonly runId: string;
  readonly status: 'completed' | 'partial';
  /** Retries spent on infrastructure failures. */
  readonly retries: number;
  readonly wallMs: number;
  readonly costUsd: number;
  readonly tokens: { input: number; output: number };
  /** Error kinds of failed and ungraded trials, with counts. */
  readonly errors: Record<string, number>;
  /** The first error message recorded for each error kind (redacted, as the trial keeps it). */
  readonly messages: Record<string, string>;
  /** Set when the run stopped itself because its first trials all failed the same way (see `stopAfter`). */
  readonly stopped?: { readonly kind: string; readonly trials: number; readonly message?: string };
}

/** @default 5: how many first trials failing the same way stop a run. */
export const DEFAULT_STOP_AFTER = 5;

export const attemptKey = (rowId: string, attempt: number): string => `${rowId}${KEY_SEP}${attempt}`;

/** Every (row, attempt) the plan asks for, in row order then attempt order. */
export const plannedAttempts = (
  plan: Pick<RunPlan, 'rows' | 'k' | 'confirm' | 'moreAttempts'>,
): { row: DatasetRow; attempt: number }[] => {
  const confirm = new Set(plan.confirm?.rows ?? []);
  return plan.rows.flatMap((row) => {
    const n = plan.k + (confirm.has(row.id) ? (plan.confirm?.extra ?? 0) : 0) + (plan.moreAttempts?.get(row.id) ?? 0);
    return Array.from({ length: n }, (_, attempt) => ({ row, attempt }));
  });
};

/**
 * Runs every planned attempt not yet recorded, `concurrency` at a time, recording each trial as it
 * finishes, then marks the run finished. Safe to kill at any point: what was recorded stays, and a
 * re-run with the same run id skips it (event ids are deterministic, so nothing can count twice).
 */
export const runTrials = async (plan: RunPlan, deps: RunDeps): Promise<RunSummary> => {
  const clock = deps.clock ?? Date.now;
  const started = clock();
  for (const row of plan.rows) deps.grader.check(row);
  const planned = plannedAttempts(plan);
  const todo = planned.filter(({ row, attempt }) => !deps.recorded?.has(attemptKey(row.id, attempt)));
  const counts = {
    total: planned.length,
    skipped: planned.length - todo.length,
    done: 0,
    passed: 0,
    failed: 0,
    ungraded: 0,
  };
  const errors: Record<string, number> = {};
  const messages: Record<string, string> = {};
  const stopAfter = Math.min(plan.stopAfter ?? DEFAULT_STOP_AFTER, todo.length);
  const first: (string | null)[] = [];
  let stopped: RunSummary['stopped'];
  let retries = 0;
  let costUsd = 0;
  const tokens = { input: 0, output: 0 };
  deps.onProgress?.({ ...counts });
  const ctx = {
    agent: deps.agent,
    grader: deps.grader,
    identity: plan.identity,
    timeoutMs: plan.timeoutMs,
    retry: plan.retry,
    clock,
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length && !deps.signal?.aborted && !stopped) {
      const { row, attempt } = todo[next++]!;
      const id = trialEventId({ ...plan.identity, row_id: row.id, attempt });
      const outcome = await runTrial(ctx, row, attempt, id);
      void deps.recorder.recordTrial(outcome.trial);
      if (outcome.judgment) void deps.recorder.recordJudgment(outcome.judgment);
      const t = outcome.trial;
      retries += outcome.retries;
      costUsd += t.cost_usd ?? 0;
      tokens.input += t.tokens?.input ?? 0;
      tokens.output += t.tokens?.output ?? 0;
      if (t.error_kind) errors[t.error_kind] = (errors[t.error_kind] ?? 0) + 1;
      if (t.error_kind && t.error_message && !(t.error_kind in messages)) messages[t.error_kind] = t.error_message;
      if (first.length < stopAfter) {
        first.push(t.passed === null ? (t.error_kind ?? 'ungraded') : null);
        const kind = first[0];
        if (first.length === stopAfter && kind && first.every((k) => k === kind))
          stopped = { kind, trials: stopAfter, ...(messages[kind] ? { message: messages[kind] } : {}) };
      }
      counts.done++;
      if (t.passed === null) counts.ungraded++;
      else if (t.passed) counts.passed++;
      else counts.failed++;
      deps.onProgress?.({ ...counts });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency, todo.length)) }, worker));
  } finally {
    await deps.recorder.flush();
  }
  const status = counts.done === todo.length ? 'completed' : 'partial';
  if (plan.finish !== false)
    await deps.recorder.markRunFinished({
      run_id: plan.identity.run_id,
      suite: plan.identity.suite,
      ...(plan.identity.dataset_id ? { dataset_id: plan.identity.dataset_id } : {}),
      dataset_version: plan.identity.dataset_version,
      agent: plan.identity.agent,
      status,
      trials: counts.skipped + counts.done,
      ungraded: counts.ungraded + [...(deps.recorded?.values() ?? [])].filter((p) => p === null).length,
      rows: plan.rows.length,
      k: plan.k,
      started_at: started,
      ...(plan.source ?? {}),
    });
  return {
    runId: plan.identity.run_id,
    status,
    ...counts,
    retries,
    wallMs: clock() - started,
    costUsd,
    tokens,
    errors,
    messages,
    ...(stopped ? { stopped } : {}),
  };
};
