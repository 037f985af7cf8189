import { z } from 'zod';
import { FailureCategory, type TrialRecorded } from '../../../schemas/events/trialRecorded.ts';
import { toDateTime64 } from '../time.ts';

/**
 * TrialRecorded ⇄ a row of `trials`. The mapping is lossless: `rowToTrial(trialToRow(e))` equals
 * `e`. Optional fields map to NULL (or ''), except where NULL or [] already means something;
 * those fields are listed in `absent` when the event did not have them. One normalization: a
 * check's `passed: null` and a missing `passed` both read back as missing.
 */

const NULLABLE_OPTIONAL = ['output', 'expected', 'score', 'error_kind', 'failure_category'] as const;
const OPTIONAL_ARRAYS = ['checks', 'actions', 'retrieved_refs', 'forbidden_actions', 'tags'] as const;

export const trialToRow = (e: TrialRecorded): Record<string, unknown> => ({
  event_id: e.event_id,
  occurred_at: toDateTime64(e.occurred_at),
  producer: e.producer,
  schema_version: e.schema_version,
  suite: e.suite,
  dataset_id: e.dataset_id ?? '',
  dataset_version: e.dataset_version,
  row_id: e.row_id,
  run_id: e.run_id,
  attempt: e.attempt,
  agent_id: e.agent.id ?? '',
  agent_version: e.agent.version,
  agent_model: e.agent.model ?? null,
  prompt_hash: e.agent.prompt_hash ?? null,
  tools_hash: e.agent.tools_hash ?? null,
  config_hash: e.agent.config_hash ?? null,
  input: e.input ?? null,
  output: e.output ?? null,
  expected: e.expected ?? null,
  passed: e.passed,
  score: e.score ?? null,
  grader_kind: e.grader?.kind ?? '',
  grader_id: e.grader?.id ?? null,
  grader_version: e.grader?.version ?? null,
  checks: (e.checks ?? []).map((c) => ({
    name: c.name,
    answer: JSON.stringify(c.answer),
    passed: c.passed === undefined ? null : c.passed,
  })),
  actions: (e.actions ?? []).map((a) => ({
    tool: a.tool,
    arguments: a.arguments === undefined ? null : JSON.stringify(a.arguments),
  })),
  retrieved_refs: e.retrieved_refs ?? [],
  forbidden_actions: e.forbidden_actions ?? [],
  error_kind: e.error_kind ?? null,
  failure_category: e.failure_category ?? null,
  // only when present: a trial without one can still be written to a store below migration 10
  ...(e.error_message === undefined ? {} : { error_message: e.error_message }),
  cost_usd: e.cost_usd ?? null,
  tokens_input: e.tokens?.input ?? null,
  tokens_output: e.tokens?.output ?? null,
  latency_ms: e.latency_ms ?? null,
  tags: e.tags ?? [],
  absent: [...NULLABLE_OPTIONAL, ...OPTIONAL_ARRAYS].filter((f) => e[f] === undefined),
});

/** The columns `rowToTrial` needs, as selected by TRIAL_COLUMNS. */
export const TrialRow = z.object({
  event_id: z.string(),
  occurred_at: z.number(),
  producer: z.string(),
  schema_version: z.number(),
  suite: z.string(),
  dataset_id: z.string(),
  dataset_version: z.string(),
  row_id: z.string(),
  run_id: z.string(),
  attempt: z.number(),
  agent_id: z.string(),
  agent_version: z.string(),
  agent_model: z.string().nullable(),
  prompt_hash: z.string().nullable(),
  tools_hash: z.string().nullable(),
  config_hash: z.string().nullable(),
  input: z.string().nullable(),
  output: z.string().nullable(),
  expected: z.string().nullable(),
  passed: z.boolean().nullable(),
  score: z.number().nullable(),
  grader_kind: z.string(),
  grader_id: z.string().nullable(),
  grader_version: z.string().nullable(),
  checks: z.array(z.object({ name: z.string(), answer: z.string(), passed: z.boolean().nullable() })),
  actions: z.array(z.object({ tool: z.string(), arguments: z.string().nullable() })),
  retrieved_refs: z.array(z.string()),
  forbidden_actions: z.array(z.string()),
  error_kind: z.string().nullable(),
  failure_category: FailureCategory.nullable(),
  error_message: z.string().nullable().optional(),
  cost_usd: z.number().nullable(),
  tokens_input: z.number().nullable(),
  tokens_output: z.number().nullable(),
  latency_ms: z.number().nullable(),
  tags: z.array(z.string()),
  absent: z.array(z.string()),
});
export type TrialRow = z.infer<typeof TrialRow>;

/** Column list for SELECTs that feed `rowToTrial` (times as epoch ms). */
export const TRIAL_COLUMNS = Object.keys(TrialRow.shape)
  .map((c) => (c === 'occurred_at' ? 'toUnixTimestamp64Milli(occurred_at) AS occurred_at' : `\`${c}\``))
  .join(', ');

/**
 * The event a row holds. The row was checked on its way out of the store (`TrialRow`, every column's type) and the
 * event on its way in (the sink writes only parsed events), so it is built field by field, in the schema's order,
 * without a second parse: that parse and the spreads cost about as much as the query at 200k trials.
 */
export const rowToTrial = (r: TrialRow): TrialRecorded => {
  const absent = r.absent.length === 0 ? undefined : new Set(r.absent);
  const keeps = (field: string): boolean => absent === undefined || !absent.has(field);
  const e: Record<string, unknown> = {
    event_id: r.event_id,
    type: 'TrialRecorded',
    schema_version: r.schema_version,
    occurred_at: r.occurred_at,
    producer: r.producer,
    suite: r.suite,
  };
  if (r.dataset_id !== '') e.dataset_id = r.dataset_id;
  e.dataset_version = r.dataset_version;
  e.row_id = r.row_id;
  e.run_id = r.run_id;
  e.attempt = r.attempt;
  const agent: Record<string, unknown> = {};
  if (r.agent_id !== '') agent.id = r.agent_id;
  agent.version = r.agent_version;
  if (r.agent_model !== null) agent.model = r.agent_model;
  if (r.prompt_hash !== null) agent.prompt_hash = r.prompt_hash;
  if (r.tools_hash !== null) agent.tools_hash = r.tools_hash;
  if (r.config_hash !== null) agent.config_hash = r.config_hash;
  e.agent = agent;
  if (r.input !== null) e.input = r.input;
  if (keeps('output')) e.output = r.output;
  if (keeps('expected')) e.expected = r.expected;
  e.passed = r.passed;
  if (keeps('score')) e.score = r.score;
  if (r.grader_kind !== '') {
    const grader: Record<string, unknown> = { kind: r.grader_kind };
    if (r.grader_id !== null) grader.id = r.grader_id;
    if (r.grader_version !== null) grader.version = r.grader_version;
    e.grader = grader;
  }
  if (keeps('checks'))
    e.checks = r.checks.map((c) => {
      const check: Record<string, unknown> = { name: c.name, answer: JSON.parse(c.answer) as unknown };
      if (c.passed !== null) check.passed = c.passed;
      return check;
    });
  if (keeps('actions'))
    e.actions = r.actions.map((a) =>
      a.arguments === null ? { tool: a.tool } : { tool: a.tool, arguments: JSON.parse(a.arguments) as unknown },
    );
  if (keeps('retrieved_refs')) e.retrieved_refs = r.retrieved_refs;
  if (keeps('forbidden_actions')) e.forbidden_actions = r.forbidden_actions;
  if (keeps('error_kind')) e.error_kind = r.error_kind;
  if (keeps('failure_category')) e.failure_category = r.failure_category;
  if (r.error_message != null) e.error_message = r.error_message;
  if (r.cost_usd !== null) e.cost_usd = r.cost_usd;
  if (r.tokens_input !== null && r.tokens_output !== null)
    e.tokens = { input: r.tokens_input, output: r.tokens_output };
  if (r.latency_ms !== null) e.latency_ms = r.latency_ms;
  if (keeps('tags')) e.tags = r.tags;
  return e as TrialRecorded;
};
