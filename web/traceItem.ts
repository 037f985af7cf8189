import { failureSignals } from '../processors/core/failureSignals.ts';
import type { TraceSampled } from '../schemas/events/index.ts';
import type { TraceListItem } from './data.ts';

/** One line of the review list: a sampled trace, what makes it a failure, and what the reader adds (signals as
 * stored, its confirmation, the dataset row it became). Both the store's data and the in-memory data use it. */
export const traceListItem = (
  t: TraceSampled,
  more: Pick<TraceListItem, 'user_signals' | 'confirmation' | 'dataset_row'>,
): TraceListItem => ({
  trace_id: t.trace_id,
  occurred_at: t.occurred_at,
  agent_version: t.agent_version,
  segment: t.segment,
  sampling_probability: t.sampling.probability,
  verdicts: (t.verdicts ?? []).map((v) => ({ grader: v.grader, passed: v.passed })),
  input: t.payload?.input ?? null,
  output: t.payload?.output ?? null,
  error_kind: t.error_kind ?? null,
  user_signals: more.user_signals,
  user_id: t.user_id ?? null,
  session_id: t.session_id ?? null,
  latency_ms: t.latency_ms ?? null,
  model: t.model ?? null,
  response_model: t.response_model ?? null,
  cost_usd: t.cost_usd ?? null,
  tokens_input: t.tokens?.input ?? null,
  tokens_output: t.tokens?.output ?? null,
  why: failureSignals(t),
  confirmation: more.confirmation,
  dataset_row: more.dataset_row,
});
