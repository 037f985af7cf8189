import { z } from 'zod';
import { actionsOf, lastText } from './actions.ts';
import {
  attemptCounter,
  baseName,
  contentHash,
  derivedRunId,
  type FileEntry,
  fileRun,
  type ImportOptions,
  type ParsedFile,
  parsedFile,
  parseShape,
  passedFromReward,
} from './common.ts';

/**
 * τ-bench results JSON: a list of `{task_id, reward, info, traj, trial}` (run.py's checkpoint file).
 * Every field τ-bench itself may write as `None` is nullable here: its own published trajectories have
 * `info.user_cost: null` (a user simulator whose cost litellm could not price) and `info.reward_info: null`.
 */
const Entry = z.looseObject({
  task_id: z.union([z.number(), z.string()]),
  reward: z.number(),
  trial: z.number().int().nonnegative().nullish(),
  info: z
    .looseObject({
      error: z.string().nullish(),
      traceback: z.string().nullish(),
      user_cost: z.number().nullish(),
      reward_info: z.unknown().optional(),
      task: z.looseObject({ instruction: z.string().nullish() }).nullish(),
    })
    .nullish(),
  traj: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })).nullish(),
});
export const TauBenchFile = z.array(Entry).min(1);

/**
 * The trials per task a τ-bench file declares: τ-bench writes no setting, and its own `display_metrics` takes
 * `num_trials` as the number of distinct `trial` values in the results; so does passk. Undefined when an entry has no
 * `trial` (attempts are then numbered by order).
 */
export const tauBenchDeclaredK = (trials: ReadonlySet<number>, everyEntryHasTrial: boolean): number | undefined =>
  everyEntryHasTrial && trials.size > 0 ? trials.size : undefined;

export const looksLikeTauBench = (v: unknown): boolean =>
  Array.isArray(v) &&
  v.length > 0 &&
  typeof v[0] === 'object' &&
  v[0] !== null &&
  'task_id' in v[0] &&
  'reward' in v[0] &&
  'traj' in v[0];

/** The domain from the policy τ-bench puts in the system prompt ("# Airline Agent Policy"). */
const domainOf = (entries: z.output<typeof TauBenchFile>): string | undefined => {
  for (const e of entries) {
    const domain = domainOfEntry(e);
    if (domain) return domain;
  }
  return undefined;
};

/**
 * suite ← `--suite`, else the domain named by the system prompt, else `tau-bench`;
 * agent version ← `--agent-version`, else the file name (τ-bench names files after agent and model);
 * dataset version ← a hash of the task definitions in the file; run ← a hash of the file;
 * row ← task_id; attempt ← trial; passed ← reward within 1e-6 of 1.
 * An entry with `info.error` (τ-bench caught an exception: an API or environment failure) is ungraded.
 */
export const parseTauBench = (text: string, value: unknown, file: string, opts: ImportOptions = {}): ParsedFile => {
  const entries = parseShape(TauBenchFile, value, file, 'τ-bench results');
  const version = opts.agentVersion ?? baseName(file);
  // The task of a row is its first definition in the file: an exception entry (τ-bench's `{"error", "traceback"}`
  // info) carries none, and must not change the version, or two runs of the same tasks would not pair.
  const tasks = new Map<string, unknown>();
  for (const e of entries) if (e.info?.task && !tasks.has(String(e.task_id))) tasks.set(String(e.task_id), e.info.task);
  for (const e of entries) if (!tasks.has(String(e.task_id))) tasks.set(String(e.task_id), null);
  const run = fileRun(opts, {
    suite: domainOf(entries) ?? 'tau-bench',
    datasetVersion: `tau-bench-${contentHash([...tasks].sort(([a], [b]) => a.localeCompare(b)))}`,
    runId: derivedRunId('tau-bench', text, undefined),
    grader: { kind: 'external', id: 'tau-bench' },
  });
  const nextAttempt = attemptCounter();
  return parsedFile(
    'tau-bench',
    run,
    entries.map((e) => tauBenchEntry(e, version, nextAttempt)),
  );
};

export type TauBenchEntry = z.output<typeof Entry>;
export { Entry as TauBenchEntrySchema };

/** One τ-bench entry as a file entry (see `parseTauBench`); `nextAttempt` numbers entries without a trial. */
export const tauBenchEntry = (
  e: TauBenchEntry,
  version: string,
  nextAttempt: ReturnType<typeof attemptCounter>,
): FileEntry => {
  const row = String(e.task_id);
  const failedToRun = e.info?.error != null;
  return {
    row,
    attempt: e.trial ?? nextAttempt(version, row),
    agent: { version },
    passed: failedToRun ? null : passedFromReward(e.reward),
    score: e.reward,
    ...(failedToRun ? { errorKind: 'exception' } : {}),
    input: e.info?.task?.instruction || undefined,
    output: lastText(e.traj ?? undefined) || undefined,
    actions: actionsOf(e.traj ?? undefined),
  };
};

/** The domain τ-bench names in an entry's first system message ("# Airline Agent Policy"), if any. */
export const domainOfEntry = (e: TauBenchEntry): string | undefined => {
  const system = e.traj?.find((m) => m.role === 'system')?.content;
  const m = typeof system === 'string' ? /^#\s*(\w+)\s+agent policy/im.exec(system) : null;
  return m ? m[1]!.toLowerCase() : undefined;
};
