import { z } from 'zod';
import { actionsOf, lastText } from './actions.ts';
import {
  attemptCounter,
  contentHash,
  derivedRunId,
  type FileEntry,
  fileRun,
  type ImportOptions,
  type ParsedFile,
  parsedFile,
  parseShape,
  parseTime,
  passedFromReward,
} from './common.ts';

const Message = z.looseObject({
  role: z.string(),
  usage: z
    .looseObject({ completion_tokens: z.number().optional(), prompt_tokens: z.number().optional() })
    .nullable()
    .optional(),
});
const Simulation = z.looseObject({
  task_id: z.union([z.string(), z.number()]),
  trial: z.number().int().nonnegative().optional(),
  termination_reason: z.string().optional(),
  reward_info: z.looseObject({ reward: z.number() }).nullable().optional(),
  agent_cost: z.number().nullable().optional(),
  duration: z.number().nullable().optional(),
  start_time: z.string().optional(),
  timestamp: z.string().optional(),
  messages: z.array(Message).optional(),
});
export const Tau2File = z.looseObject({
  timestamp: z.string().optional(),
  info: z.looseObject({
    git_commit: z.string().optional(),
    num_trials: z.number().optional(),
    agent_info: z.looseObject({ implementation: z.string().optional(), llm: z.string().optional() }).optional(),
    environment_info: z.looseObject({ domain_name: z.string() }),
  }),
  tasks: z.array(z.looseObject({ id: z.union([z.string(), z.number()]) })).optional(),
  simulations: z.array(Simulation),
});

/** The trials per task a τ²-bench file declares (`info.num_trials`, τ²'s `--num-trials`); undefined without one. */
export const tau2DeclaredK = (info: z.output<typeof Tau2File>['info']): number | undefined =>
  typeof info.num_trials === 'number' && Number.isInteger(info.num_trials) && info.num_trials > 0
    ? info.num_trials
    : undefined;

export const looksLikeTau2 = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && 'simulations' in v && 'info' in v;

/**
 * τ²'s evaluator gives reward 0 to a simulation ended by `agent_error` or `user_error` (a party broke the protocol):
 * a graded failure, as τ² counts it. Only `infrastructure_error` (the harness itself failed) is excluded.
 */
const FAILED_TERMINATIONS = new Set(['agent_error', 'user_error']);
const INFRA_TERMINATIONS = new Set(['infrastructure_error']);
/** The conversation ended as conversations should; anything else is noted as the error kind. */
const NORMAL_TERMINATIONS = new Set(['agent_stop', 'user_stop']);

const tokensOf = (messages: z.output<typeof Message>[] | undefined) => {
  let input = 0;
  let output = 0;
  let any = false;
  for (const m of messages ?? [])
    if (m.role === 'assistant' && m.usage) {
      any = true;
      input += m.usage.prompt_tokens ?? 0;
      output += m.usage.completion_tokens ?? 0;
    }
  return any ? { input, output } : undefined;
};

/**
 * τ²-bench results JSON. suite ← environment domain; agent ← `agent_info.llm` (id: the implementation);
 * dataset version ← `tau2@<git commit>` (else a hash of the tasks); run ← a hash of the file, timed by its timestamp;
 * row ← task_id; attempt ← trial; passed ← `reward_info.reward` within 1e-6 of 1 (τ²'s own rule).
 * A simulation ended by `agent_error`/`user_error` fails with score 0 (τ²'s evaluator rule); one ended by
 * `infrastructure_error`, or without a reward, is ungraded; other unusual terminations (max_steps,
 * too_many_errors) stay graded, as τ² counts them, with the reason as error kind.
 */
export const parseTau2 = (text: string, value: unknown, file: string, opts: ImportOptions = {}): ParsedFile => {
  const doc = parseShape(Tau2File, value, file, 'τ²-bench results');
  const agent = tau2Agent(doc.info, opts);
  const commit = doc.info.git_commit?.slice(0, 7);
  const run = fileRun(opts, {
    suite: doc.info.environment_info.domain_name,
    datasetVersion: commit ? `tau2@${commit}` : `tau2-${contentHash((doc.tasks ?? []).map((t) => t.id))}`,
    runId: derivedRunId('tau2', text, parseTime(doc.timestamp)),
    grader: { kind: 'external', id: 'tau2-bench', ...(commit ? { version: commit } : {}) },
  });
  const nextAttempt = attemptCounter();
  return parsedFile(
    'tau2-bench',
    run,
    doc.simulations.map((s) => tau2Entry(s, agent, nextAttempt)),
  );
};

export type Tau2Simulation = z.output<typeof Simulation>;
export { Simulation as Tau2SimulationSchema };

/** The agent of a τ² file, from its `info.agent_info` (see `parseTau2`). */
export const tau2Agent = (info: z.output<typeof Tau2File>['info'], opts: ImportOptions) => {
  const agentInfo = info.agent_info;
  const version = opts.agentVersion ?? agentInfo?.llm ?? agentInfo?.implementation ?? 'tau2-agent';
  return {
    version,
    ...(agentInfo?.implementation ? { id: agentInfo.implementation } : {}),
    ...(agentInfo?.llm ? { model: agentInfo.llm } : {}),
  };
};

/** One τ² simulation as a file entry (see `parseTau2`). */
export const tau2Entry = (
  s: Tau2Simulation,
  agent: FileEntry['agent'],
  nextAttempt: ReturnType<typeof attemptCounter>,
): FileEntry => {
  const row = String(s.task_id);
  const reason = s.termination_reason;
  const failed = reason !== undefined && FAILED_TERMINATIONS.has(reason);
  const ungraded = !failed && (!s.reward_info || (reason !== undefined && INFRA_TERMINATIONS.has(reason)));
  return {
    row,
    attempt: s.trial ?? nextAttempt(agent.version, row),
    agent,
    passed: failed ? false : ungraded ? null : passedFromReward(s.reward_info!.reward),
    score: failed ? 0 : (s.reward_info?.reward ?? null),
    errorKind: !s.reward_info
      ? (reason ?? 'no_reward')
      : reason && !NORMAL_TERMINATIONS.has(reason)
        ? reason
        : undefined,
    output: lastText(s.messages) || undefined,
    actions: actionsOf(s.messages),
    costUsd: s.agent_cost,
    tokens: tokensOf(s.messages),
    latencyMs: typeof s.duration === 'number' ? s.duration * 1000 : undefined,
    at: parseTime(s.start_time ?? s.timestamp),
  };
};
