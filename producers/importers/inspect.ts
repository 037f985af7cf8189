import { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';
import type { TrialInput } from '../sdk/inputs.ts';
import {
  clip,
  contentHash,
  type ImportedTrial,
  type ImportOptions,
  type ParsedFile,
  parseShape,
  parseTime,
  withId,
} from './common.ts';

const Score = z.looseObject({ value: z.unknown() }).nullable();
const Sample = z.looseObject({
  id: z.union([z.string(), z.number()]),
  epoch: z.number().int().nonnegative().optional(),
  input: z.unknown().optional(),
  target: z.unknown().optional(),
  output: z.looseObject({ completion: z.unknown().optional(), choices: z.array(z.unknown()).optional() }).optional(),
  scores: z.record(z.string(), Score).nullable().optional(),
  error: z.unknown().optional(),
  model_usage: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  total_time: z.number().nullable().optional(),
});
export const InspectFile = z.looseObject({
  version: z.number().optional(),
  /** success, or error / cancelled / started: an eval that did not finish did not give every sample its epochs. */
  status: z.string().optional(),
  eval: z.looseObject({
    eval_id: z.string().optional(),
    run_id: z.string().optional(),
    task: z.string(),
    task_id: z.string().optional(),
    created: z.string().optional(),
    model: z.string(),
    dataset: z.looseObject({ name: z.string().optional() }).optional(),
    scorers: z.array(z.looseObject({ name: z.string() })).optional(),
    packages: z.record(z.string(), z.unknown()).optional(),
    /** `{epochs: 3, …}` from inspect_ai; other writers leave it out or write `[]` (the R package vitals). */
    config: z.unknown().optional(),
  }),
  samples: z.array(Sample).optional(),
});

/**
 * The epochs an Inspect log declares each sample was given: `eval.config.epochs` of an eval that finished (`status`
 * success, or none written). Inspect runs every sample that many times and reduces over them; an epoch missing from
 * the log (a sample that never ran) does not change what was declared. Undefined when the log does not say.
 */
export const inspectDeclaredK = (doc: Pick<z.output<typeof InspectFile>, 'status' | 'eval'>): number | undefined => {
  if (doc.status !== undefined && doc.status !== 'success') return undefined;
  const config = doc.eval.config;
  const epochs =
    typeof config === 'object' && config !== null && !Array.isArray(config)
      ? (config as { epochs?: unknown }).epochs
      : undefined;
  return typeof epochs === 'number' && Number.isInteger(epochs) && epochs > 0 ? epochs : undefined;
};

export const looksLikeInspect = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && 'eval' in v && ('samples' in v || 'results' in v);

/** The numeric value of an Inspect score, following inspect_ai's `value_to_float`: C 1, P 0.5, I and N 0. */
const scoreOf = (v: unknown): number | undefined => {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  if (['c', 'correct', 'yes', 'true'].includes(s)) return 1;
  if (['i', 'incorrect', 'no', 'false', 'n'].includes(s)) return 0;
  if (s === 'p' || s === 'partial') return 0.5;
  const n = Number(s);
  return s !== '' && Number.isFinite(n) ? n : undefined;
};

/**
 * An Inspect score value as pass/fail and a score. The score is inspect_ai's `value_to_float` (C 1, P 0.5, I 0,
 * N 0, numbers as they are), so the mean of the scores is Inspect's own `mean` metric. The trial passes when the
 * score is at least `threshold` (Inspect's rule, `>= 1`, by default: P, partial credit, FAILS; pass
 * `--pass-threshold 0.5` to count it as a pass). A value that is not a score is undefined.
 */
export const inspectValue = (v: unknown, threshold = 1): { passed: boolean; score: number } | undefined => {
  const score = scoreOf(v);
  // 1e-9 absorbs float noise such as 0.1 + 0.2 + 0.7 written by a scorer that sums parts.
  return score === undefined ? undefined : { passed: score >= threshold - 1e-9, score };
};

/** An epoch Inspect itself leaves out of its metrics: no score at all, a null score or a null (NaN) value. */
const unscored = (v: unknown): boolean => v === undefined || v === null;

const textOf = (v: unknown): string | undefined => {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const parts = v.map((x) =>
      typeof x === 'string'
        ? x
        : textOf((x as { content?: unknown; text?: unknown })?.content ?? (x as { text?: unknown })?.text),
    );
    const joined = parts.filter((p): p is string => typeof p === 'string').join('\n');
    return joined === '' ? undefined : joined;
  }
  return undefined;
};

const outputOf = (s: z.output<typeof Sample>): string | undefined => {
  const completion = textOf(s.output?.completion);
  if (completion) return completion;
  const first = s.output?.choices?.[0] as { message?: { content?: unknown } } | undefined;
  return textOf(first?.message?.content);
};

const tokensOf = (usage: z.output<typeof Sample>['model_usage']) => {
  if (!usage) return undefined;
  let input = 0;
  let output = 0;
  for (const u of Object.values(usage)) {
    const n = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : 0);
    input += n('input_tokens') + n('prompt_tokens');
    output += n('output_tokens') + n('completion_tokens');
  }
  return input + output > 0 ? { input, output } : undefined;
};

/**
 * Inspect AI eval log (JSON, `version: 2`). suite ← the task; agent ← the model; row ← sample id;
 * attempt ← epoch; passed/score ← the chosen scorer's value (`--scorer`, else the first scorer; see `inspectValue`);
 * a sample with an `error` is ungraded (a test-environment failure), and so is an epoch without a score, with a
 * null score or a `NaN` value, which Inspect leaves out of its metrics (error kind `unscored`).
 * run ← eval_id (or run_id/task_id).
 */
export const parseInspect = (_text: string, value: unknown, file: string, opts: ImportOptions = {}): ParsedFile => {
  const doc = parseShape(InspectFile, value, file, 'Inspect eval log');
  const samples = doc.samples ?? [];
  if (samples.length === 0)
    throw new InputError('the log has no samples (was it written with log_samples=False?)', { file, field: 'samples' });
  const rows = [...new Map(samples.map((s) => [String(s.id), textOf(s.target) ?? null])).entries()].sort(([a], [b]) =>
    a.localeCompare(b),
  );
  const ctx = inspectContext(
    doc.eval,
    Object.keys(samples.find((s) => s.scores)?.scores ?? {})[0],
    contentHash(rows),
    file,
    opts,
  );
  return { format: 'inspect', trials: samples.map((s, i) => inspectTrial(s, i, ctx, file, opts)) };
};

export type InspectSample = z.output<typeof Sample>;
export type InspectEval = z.output<typeof InspectFile>['eval'];
export { Sample as InspectSampleSchema, textOf as inspectText };
export type InspectContext = ReturnType<typeof inspectContext>;

/**
 * What an Inspect log says once for all its samples: the scorer (`--scorer`, else the first of `eval.scorers`, else
 * the first score of the first scored sample), suite, agent, run and dataset version (from the hash of the sorted
 * ids and targets).
 */
export const inspectContext = (
  ev: InspectEval,
  firstScoreName: string | undefined,
  rowsHash: string,
  file: string,
  opts: ImportOptions,
) => {
  const scorer = opts.scorer ?? ev.scorers?.[0]?.name ?? firstScoreName;
  if (!scorer) throw new InputError('no scorer found in the log', { file, field: 'eval.scorers' });
  const runId = opts.runId ?? ev.eval_id ?? [ev.run_id, ev.task_id].filter(Boolean).join('/');
  if (!runId) throw new InputError('the log has no eval_id or run_id: pass --run-id', { file, field: 'eval.run_id' });
  return {
    scorer,
    suite: opts.suite ?? ev.task,
    version: opts.agentVersion ?? ev.model,
    model: ev.model,
    runId,
    datasetVersion: opts.datasetVersion ?? `${ev.dataset?.name ?? 'inspect'}-${rowsHash}`,
    at: parseTime(ev.created),
    inspectVersion: ev.packages?.inspect_ai,
  };
};

/** The trial of sample `i` of an Inspect log (see `parseInspect`). */
export const inspectTrial = (
  s: InspectSample,
  i: number,
  ctx: InspectContext,
  file: string,
  opts: ImportOptions,
): ImportedTrial => {
  const { scorer, at, inspectVersion } = ctx;
  const errored = s.error !== undefined && s.error !== null;
  const raw = s.scores?.[scorer]?.value;
  const notScored = !errored && unscored(raw);
  const verdict = errored || notScored ? undefined : inspectValue(raw, opts.passThreshold);
  if (!errored && !notScored && !verdict)
    throw new InputError(`score ${JSON.stringify(raw)} of scorer "${scorer}" is not C/I/P/N, a number or a boolean`, {
      file,
      field: `samples[${i}].scores.${scorer}.value`,
    });
  const output = outputOf(s);
  const input = textOf(s.input);
  const expected = textOf(s.target);
  const tokens = tokensOf(s.model_usage);
  const trial: TrialInput = {
    suite: ctx.suite,
    ...(opts.datasetId ? { dataset_id: opts.datasetId } : {}),
    dataset_version: ctx.datasetVersion,
    row_id: String(s.id),
    run_id: ctx.runId,
    attempt: s.epoch ?? 1,
    agent: { version: ctx.version, model: ctx.model },
    passed: verdict ? verdict.passed : null,
    score: verdict ? verdict.score : null,
    grader: {
      kind: 'external',
      id: scorer,
      ...(typeof inspectVersion === 'string' ? { version: `inspect_ai ${inspectVersion}` } : {}),
    },
    ...(errored ? { error_kind: 'sample_error', failure_category: 'test_environment' as const } : {}),
    ...(notScored ? { error_kind: 'unscored' } : {}),
    ...(input ? { input: clip(input) } : {}),
    ...(output ? { output: clip(output) } : {}),
    ...(expected ? { expected: clip(expected) } : {}),
    ...(tokens ? { tokens } : {}),
    ...(typeof s.total_time === 'number' ? { latency_ms: s.total_time * 1000 } : {}),
    ...(at !== undefined ? { occurred_at: at } : {}),
  };
  return withId(trial);
};
