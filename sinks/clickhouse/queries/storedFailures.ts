import { z } from 'zod';
import type { TraceSampled } from '../../../schemas/events/index.ts';
import { select, type Querier } from './select.ts';

/**
 * Sampled production failures from the store (the processors' `traces` and `confirmed_failures` tables),
 * for `passk review`: the store keeps traces for their retention and answers by index, where the log
 * would have to be read whole. Traces reach it through `passk process`. Whether a candidate is a failure is the
 * review's rule (producers/review/failures.ts `failureSignals`), passed in as `why`.
 */

export const StoredTraceRow = z.object({
  event_id: z.string(),
  occurred_at: z.coerce.number(),
  producer: z.string(),
  schema_version: z.number(),
  trace_id: z.string(),
  agent_version: z.string(),
  segment: z.string(),
  input_fingerprint: z.string(),
  sampling_policy: z.string(),
  sampling_probability: z.number(),
  graders: z.array(z.string()),
  passed: z.array(z.boolean().nullable()),
  scores: z.array(z.number().nullable()),
  actions: z.array(z.object({ tool: z.string(), arguments: z.string().nullable() })),
  tokens_input: z.number().nullable(),
  tokens_output: z.number().nullable(),
  user_signals: z.record(z.string(), z.string()),
  error_kind: z.string().nullable(),
  payload_input: z.string().nullable(),
  payload_output: z.string().nullable(),
  has_payload: z.boolean(),
  tags: z.array(z.string()),
  revision: z.number(),
  user_id: z.string().nullable(),
  session_id: z.string().nullable(),
  latency_ms: z.number().nullable(),
  model: z.string().nullable(),
  response_model: z.string().nullable(),
  cost_usd: z.number().nullable(),
});
type Row = z.infer<typeof StoredTraceRow>;

/** The columns StoredTraceRow reads from `traces` (select them FROM traces FINAL). */
export const STORED_TRACE_COLUMNS = `event_id, toUnixTimestamp64Milli(occurred_at) AS occurred_at, producer, schema_version, trace_id,
         agent_version, segment, input_fingerprint, sampling_policy, sampling_probability,
         arrayMap(v -> tupleElement(v, 'grader'), verdicts) AS graders,
         arrayMap(v -> tupleElement(v, 'passed'), verdicts) AS passed,
         arrayMap(v -> tupleElement(v, 'score'), verdicts) AS scores, actions, tokens_input, tokens_output,
         user_signals, error_kind, payload_input, payload_output, has_payload, tags,
         revision, user_id, session_id, latency_ms, model, response_model, cost_usd`;
/**
 * The filters on a trace list (a user, a session, a model (requested or answering), a least latency): the SQL and
 * its parameters.
 */
export const TRACE_FILTERS = `({user_id:String} = '' OR user_id = {user_id:String})
    AND ({session_id:String} = '' OR session_id = {session_id:String})
    AND ({model:String} = '' OR model = {model:String} OR response_model = {model:String})
    AND ({min_latency_ms:Float64} = 0 OR latency_ms >= {min_latency_ms:Float64})`;
export interface TraceFilters {
  readonly userId?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly model?: string | undefined;
  readonly minLatencyMs?: number | undefined;
}
export const traceFilterParams = (f: TraceFilters) => ({
  user_id: f.userId ?? '',
  session_id: f.sessionId ?? '',
  model: f.model ?? '',
  min_latency_ms: f.minLatencyMs ?? 0,
});
/** A trace that may be a failure: a failed verdict, an error, or any user signal (TypeScript decides which are negative). */
export const FAILURE_CANDIDATE = `(arrayExists(v -> coalesce(tupleElement(v, 'passed'), true) = false, verdicts) OR error_kind IS NOT NULL OR notEmpty(user_signals))`;

/** A stored user signal's value as it was sent (stored as JSON text). */
export const parseSignal = (text: string): string | number | boolean => {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : text;
  } catch {
    return text;
  }
};

/** A stored trace as the event it was (the sink's row mapping, inverted). */
export const traceOfRow = (r: Row): TraceSampled => ({
  event_id: r.event_id,
  type: 'TraceSampled',
  schema_version: r.schema_version,
  occurred_at: r.occurred_at,
  producer: r.producer,
  trace_id: r.trace_id,
  agent_version: r.agent_version,
  segment: r.segment,
  input_fingerprint: r.input_fingerprint,
  sampling: { policy: r.sampling_policy, probability: r.sampling_probability },
  ...(r.graders.length
    ? {
        verdicts: r.graders.map((grader, i) => ({
          grader,
          passed: r.passed[i] ?? null,
          ...(r.scores[i] != null ? { score: r.scores[i] } : {}),
        })),
      }
    : {}),
  ...(r.actions.length
    ? {
        actions: r.actions.map((a) => ({
          tool: a.tool,
          ...(a.arguments === null ? {} : { arguments: JSON.parse(a.arguments) as Record<string, unknown> }),
        })),
      }
    : {}),
  ...(r.tokens_input !== null && r.tokens_output !== null
    ? { tokens: { input: r.tokens_input, output: r.tokens_output } }
    : {}),
  ...(Object.keys(r.user_signals).length
    ? { user_signals: Object.fromEntries(Object.entries(r.user_signals).map(([k, v]) => [k, parseSignal(v)])) }
    : {}),
  ...(r.error_kind !== null ? { error_kind: r.error_kind } : {}),
  ...(r.has_payload
    ? {
        payload: {
          ...(r.payload_input !== null ? { input: r.payload_input } : {}),
          ...(r.payload_output !== null ? { output: r.payload_output } : {}),
        },
      }
    : {}),
  ...(r.tags.length ? { tags: r.tags } : {}),
  ...(r.revision ? { revision: r.revision } : {}),
  ...(r.user_id !== null ? { user_id: r.user_id } : {}),
  ...(r.session_id !== null ? { session_id: r.session_id } : {}),
  ...(r.latency_ms !== null ? { latency_ms: r.latency_ms } : {}),
  ...(r.model !== null ? { model: r.model } : {}),
  ...(r.response_model !== null ? { response_model: r.response_model } : {}),
  ...(r.cost_usd !== null ? { cost_usd: r.cost_usd } : {}),
});

// Candidates: a failed verdict, an error, or any user signal (whether a signal is negative is decided in
// TypeScript, by the sampler's own rule). Newest first, one event per trace (its latest revision), confirmed ones
// left out.
const QUERY = `
  SELECT ${STORED_TRACE_COLUMNS}
  FROM traces FINAL
  WHERE ${FAILURE_CANDIDATE}
    AND ({agent_version:String} = '' OR agent_version = {agent_version:String})
    AND ({segment:String} = '' OR segment = {segment:String})
    AND ${TRACE_FILTERS}
    AND trace_id NOT IN (SELECT trace_id FROM confirmed_failures)
  ORDER BY occurred_at DESC, trace_id, revision DESC, event_id DESC
  LIMIT 1 BY trace_id
  LIMIT {page:UInt32} OFFSET {offset:UInt64}`;

/**
 * Sampled production failures in the store, newest first, without those confirmed (in the store, or
 * in `alsoConfirmed`: confirmations the processors have not stored yet).
 */
export const listStoredFailures = async (
  client: Querier,
  opts: {
    /** Why a stored trace is a failure; none = it is not one. */
    why: (trace: TraceSampled) => string[];
    agentVersion?: string;
    segment?: string;
    limit?: number;
    alsoConfirmed?: ReadonlySet<string>;
  } & TraceFilters,
): Promise<{ trace: TraceSampled; why: string[] }[]> => {
  const limit = opts.limit ?? Infinity;
  const page = Math.min(10_000, Math.max(200, Number.isFinite(limit) ? limit * 2 : 1_000));
  const out: { trace: TraceSampled; why: string[] }[] = [];
  for (let offset = 0; out.length < limit; offset += page) {
    const rows = await select(client, StoredTraceRow, QUERY, {
      agent_version: opts.agentVersion ?? '',
      segment: opts.segment ?? '',
      ...traceFilterParams(opts),
      page,
      offset,
    });
    for (const r of rows) {
      if (opts.alsoConfirmed?.has(r.trace_id)) continue;
      const trace = traceOfRow(r);
      const why = opts.why(trace);
      if (why.length > 0 && out.length < limit) out.push({ trace, why });
    }
    if (rows.length < page) break;
  }
  return out;
};
