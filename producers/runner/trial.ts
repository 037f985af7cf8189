import { createHash } from 'node:crypto';
import type { Check } from '../../schemas/events/trialRecorded.ts';
import { clip } from '../importers/common.ts';
import type { TrialInput } from '../sdk/inputs.ts';
import { type RetryPolicy, withRetry } from '../../schemas/retry.ts';
import { AgentUnavailable, classifyFailure } from './agents/failures.ts';
import type { Agent, AgentResult } from './agents/types.ts';
import { asText, type DatasetRow } from './dataset.ts';
import type { Grade, Grader } from './graders/types.ts';
import { clipText, redactText } from '../redaction/index.ts';

/** An error's words as a trial keeps them: redacted (they may quote the input or a secret) and clipped. */
export const errorMessage = (message: string): string => clipText(redactText(message), 1_000);

export interface TrialContext {
  readonly agent: Agent;
  readonly grader: Grader;
  readonly identity: Pick<TrialInput, 'suite' | 'dataset_id' | 'dataset_version' | 'run_id' | 'agent'>;
  readonly timeoutMs: number;
  /** Retries of infrastructure failures only (timeouts, crashes, 5xx, a judge that is down). */
  readonly retry: RetryPolicy;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly clock: () => number;
}

export interface TrialOutcome {
  readonly trial: TrialInput;
  readonly judgment?: Grade['judgment'];
  /** Retries spent on infrastructure failures of this trial. */
  readonly retries: number;
}

/** A 32-bit seed from (run, row, attempt): the same attempt gets the same seed on a re-run. */
export const trialSeed = (runId: string, rowId: string, attempt: number): number =>
  createHash('sha256')
    .update(JSON.stringify([runId, rowId, attempt]))
    .digest()
    .readUInt32BE(0);

/** Checks graded against the row's expected answers, where it has one for that check. */
const gradeChecks = (checks: Check[] | undefined, expected: DatasetRow['expected_checks']): Check[] | undefined =>
  checks?.map((c) =>
    expected && c.name in expected && c.passed === undefined ? { ...c, passed: c.answer === expected[c.name] } : c,
  );

/**
 * Runs one attempt and grades it. Infrastructure failures (of the agent or the grader) are retried by the
 * policy and, when retries run out, give an ungraded trial (passed: null, error_kind, failure category
 * test_environment). The agent's own failures are graded as failed. Never throws for a failed trial.
 */
export const runTrial = async (
  ctx: TrialContext,
  row: DatasetRow,
  attempt: number,
  eventId: string,
): Promise<TrialOutcome> => {
  let retries = 0;
  const onRetry = () => void retries++;
  const request = {
    row_id: row.id,
    attempt,
    run_id: ctx.identity.run_id,
    trial_id: eventId,
    seed: trialSeed(ctx.identity.run_id, row.id, attempt),
    input: row.input,
    ...(row.metadata ? { metadata: row.metadata } : {}),
  };
  const base: TrialInput = {
    ...ctx.identity,
    event_id: eventId,
    row_id: row.id,
    attempt,
    passed: null,
    occurred_at: ctx.clock(),
    grader: ctx.grader.spec,
    ...(asText(row.input) !== undefined ? { input: clip(asText(row.input)) } : {}),
    ...(asText(row.expected) !== undefined ? { expected: clip(asText(row.expected)) } : {}),
    ...(row.tags ? { tags: row.tags } : {}),
  };
  const retriable = (e: unknown) => classifyFailure(e).infra;

  let result: AgentResult;
  let latency = 0;
  try {
    result = await withRetry(
      async () => {
        const started = performance.now();
        const r = await ctx.agent.run(request, { timeoutMs: ctx.timeoutMs });
        latency = performance.now() - started;
        if (r.error?.infra) throw new AgentUnavailable(r.error.kind, r.error.message ?? r.error.kind);
        return r;
      },
      { policy: ctx.retry, retriable, onRetry, ...(ctx.sleep ? { sleep: ctx.sleep } : {}) },
    );
  } catch (e) {
    const c = classifyFailure(e);
    const said = c.message ? { error_message: errorMessage(c.message) } : {};
    const trial: TrialInput = c.infra
      ? { ...base, passed: null, error_kind: c.kind, failure_category: 'test_environment', ...said }
      : { ...base, passed: false, score: 0, error_kind: c.kind, ...said };
    return { trial, retries };
  }

  const output = asText(result.output);
  const measured: Partial<TrialInput> = {
    latency_ms: Math.round(latency),
    ...(output !== undefined ? { output: clip(output) } : {}),
    ...(result.actions ? { actions: result.actions } : {}),
    ...(result.retrieved_refs ? { retrieved_refs: result.retrieved_refs } : {}),
    ...(result.forbidden_actions ? { forbidden_actions: result.forbidden_actions } : {}),
    ...(result.cost_usd !== undefined ? { cost_usd: result.cost_usd } : {}),
    ...(result.tokens ? { tokens: result.tokens } : {}),
    ...(result.model ? { agent: { ...ctx.identity.agent, model: result.model } } : {}),
  };
  if (result.error) {
    const checks = gradeChecks(result.checks, row.expected_checks);
    return {
      trial: {
        ...base,
        ...measured,
        passed: false,
        score: 0,
        error_kind: result.error.kind,
        ...(result.error.message ? { error_message: errorMessage(result.error.message) } : {}),
        ...(checks ? { checks } : {}),
      },
      retries,
    };
  }
  try {
    const grade = await withRetry(
      () => ctx.grader.grade({ row, output, value: result.output, result, trialEventId: eventId }),
      {
        policy: ctx.retry,
        onRetry,
        ...(ctx.sleep ? { sleep: ctx.sleep } : {}),
      },
    );
    const checks = gradeChecks(grade.checks ?? result.checks, row.expected_checks);
    const trial: TrialInput = {
      ...base,
      ...measured,
      passed: grade.passed,
      ...(grade.score !== undefined ? { score: grade.score } : {}),
      ...(checks ? { checks } : {}),
      ...(grade.error_kind ? { error_kind: grade.error_kind } : {}),
    };
    return { trial, retries, ...(grade.judgment ? { judgment: grade.judgment } : {}) };
  } catch (e) {
    const kind = typeof (e as { kind?: unknown }).kind === 'string' ? (e as { kind: string }).kind : 'grader_error';
    const checks = gradeChecks(result.checks, row.expected_checks);
    return {
      trial: {
        ...base,
        ...measured,
        passed: null,
        error_kind: kind,
        failure_category: 'test_environment',
        ...(checks ? { checks } : {}),
      },
      retries,
    };
  }
};
