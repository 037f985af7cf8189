import { z } from 'zod';
import { select, type Querier } from '../sinks/clickhouse/queries/select.ts';
import {
  FAILURE_CANDIDATE,
  STORED_TRACE_COLUMNS,
  StoredTraceRow,
  TRACE_FILTERS,
  traceFilterParams,
  type TraceFilters,
} from '../sinks/clickhouse/queries/storedFailures.ts';

/**
 * The few reads only the dashboard needs, over the tables of sinks/clickhouse, parameterized like every
 * typed query there (`query_params`, never spliced text).
 */

// A change signal, not a measure: active parts and their row counts come from metadata, cheap at any size.
const Watermark = z.object({ rows: z.string(), parts: z.string(), at: z.string() });
export const storeWatermark = async (client: Querier): Promise<string> => {
  const [w] = await select(
    client,
    Watermark,
    `SELECT toString(sum(rows)) AS rows, toString(count()) AS parts, toString(max(modification_time)) AS at
     FROM system.parts WHERE database = currentDatabase() AND active`,
  );
  return w ? `${w.rows}/${w.parts}/${w.at}` : '';
};

export const datasetIds = async (client: Querier): Promise<string[]> =>
  (
    await select(
      client,
      z.object({ dataset_id: z.string() }),
      `SELECT DISTINCT dataset_id FROM dataset_rows ORDER BY dataset_id`,
    )
  ).map((r) => r.dataset_id);

export const traceGraders = async (client: Querier): Promise<string[]> =>
  (
    await select(
      client,
      z.object({ grader: z.string() }),
      `SELECT v.grader AS grader, count() AS n FROM traces ARRAY JOIN verdicts AS v GROUP BY grader ORDER BY n DESC, grader`,
    )
  ).map((r) => r.grader);

const Flip = z.object({
  input_fingerprint: z.string(),
  agent_version: z.string(),
  traces: z.number(),
  passed: z.number(),
  failed: z.number(),
  trace_ids: z.array(z.string()),
});

/** Inputs seen more than once (same fingerprint) whose online verdicts disagree: a flip on a repeated input. */
export const repeatedInputFlips = async (client: Querier, opts: { grader: string; limit?: number }) =>
  select(
    client,
    Flip,
    `SELECT input_fingerprint, agent_version, count() AS traces, countIf(v = true) AS passed, countIf(v = false) AS failed,
            groupArray(trace_id) AS trace_ids
     FROM (
       SELECT input_fingerprint, agent_version, trace_id,
              arrayFirst(x -> x.grader = {grader:String}, verdicts).passed AS v
       FROM traces FINAL
     )
     GROUP BY input_fingerprint, agent_version
     HAVING passed > 0 AND failed > 0
     ORDER BY traces DESC, input_fingerprint
     LIMIT {limit:UInt32}`,
    { grader: opts.grader, limit: opts.limit ?? 100 },
  );

const Trace = z.object({
  trace_id: z.string(),
  occurred_at: z.number(),
  agent_version: z.string(),
  segment: z.string(),
  input_fingerprint: z.string(),
  sampling_probability: z.number(),
  graders: z.array(z.string()),
  passed: z.array(z.boolean().nullable()),
  input: z.string().nullable(),
  output: z.string().nullable(),
  error_kind: z.string().nullable(),
  user_signals: z.record(z.string(), z.string()),
  actions: z.array(z.object({ tool: z.string(), arguments: z.string().nullable() })),
  tokens_input: z.number().nullable(),
  tokens_output: z.number().nullable(),
  revision: z.number(),
  user_id: z.string().nullable(),
  session_id: z.string().nullable(),
  latency_ms: z.number().nullable(),
  model: z.string().nullable(),
  response_model: z.string().nullable(),
  cost_usd: z.number().nullable(),
});
export type TraceRow = Omit<z.infer<typeof Trace>, 'graders' | 'passed'> & {
  verdicts: { grader: string; passed: boolean | null }[];
};

/** One sampled production trace by id: where a dataset row's provenance link leads. */
export const traceById = async (client: Querier, trace_id: string): Promise<TraceRow | null> => {
  const [t] = await select(
    client,
    Trace,
    `SELECT trace_id, toUnixTimestamp64Milli(occurred_at) AS occurred_at, agent_version, segment, input_fingerprint,
              sampling_probability, arrayMap(v -> v.grader, verdicts) AS graders, arrayMap(v -> v.passed, verdicts) AS passed,
              payload_input AS input, payload_output AS output, error_kind, user_signals, actions,
              tokens_input, tokens_output, revision, user_id, session_id, latency_ms, model, response_model, cost_usd
       FROM traces FINAL WHERE trace_id = {trace_id:String}
       ORDER BY revision DESC, event_id DESC LIMIT 1`,
    { trace_id },
  );
  if (!t) return null;
  const { graders, passed, ...rest } = t;
  return { ...rest, verdicts: graders.map((grader, i) => ({ grader, passed: passed[i] ?? null })) };
};

const Confirmation = z.object({
  event_id: z.string(),
  trace_id: z.string(),
  dataset_id: z.string(),
  reviewer: z.string(),
  expected: z.string(),
  note: z.string().nullable(),
  occurred_at: z.coerce.number(),
});
/** Reviewers' confirmations of these traces (the earliest per trace). */
export const confirmationsOf = async (client: Querier, trace_ids: readonly string[]) =>
  trace_ids.length === 0
    ? []
    : select(
        client,
        Confirmation,
        `SELECT event_id, trace_id, dataset_id, reviewer, expected, note, toUnixTimestamp64Milli(occurred_at) AS occurred_at
         FROM confirmed_failures FINAL WHERE trace_id IN {trace_ids:Array(String)}
         ORDER BY occurred_at LIMIT 1 BY trace_id`,
        { trace_ids },
      );

const BecameRow = z.object({
  trace_id: z.string(),
  dataset_id: z.string(),
  dataset_version: z.string(),
  row_id: z.string(),
});
/** The dataset rows confirmed traces became (the first dataset version that has each). */
export const datasetRowsOfTraces = async (client: Querier, trace_ids: readonly string[]) =>
  trace_ids.length === 0
    ? []
    : select(
        client,
        BecameRow,
        `SELECT assumeNotNull(provenance_trace_id) AS trace_id, dataset_id, dataset_version, row_id
         FROM dataset_rows FINAL WHERE provenance_trace_id IN {trace_ids:Array(String)}
         ORDER BY occurred_at LIMIT 1 BY trace_id`,
        { trace_ids },
      );

type TraceListQuery = {
  failed: boolean;
  agent_version?: string | undefined;
  segment?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
} & TraceFilters;

const TRACE_LIST_WHERE = `({agent_version:String} = '' OR agent_version = {agent_version:String})
       AND ({segment:String} = '' OR segment = {segment:String})
       AND occurred_at >= {from:Int64} AND occurred_at < {to:Int64} -- occurred_at is the selected alias, in ms
       AND (NOT {failed:Bool} OR ${FAILURE_CANDIDATE})
       AND (empty({ids:Array(String)}) OR has({ids:Array(String)}, trace_id))
       AND ${TRACE_FILTERS}`;
const TRACE_LIST_ORDER = `ORDER BY occurred_at DESC, trace_id, revision DESC, event_id DESC
     LIMIT 1 BY trace_id`;

const traceListParams = (q: TraceListQuery, ids: readonly string[] = []) => ({
  agent_version: q.agent_version ?? '',
  segment: q.segment ?? '',
  from: q.from ?? 0,
  to: q.to ?? 8_640_000_000_000,
  failed: q.failed,
  ids: [...ids],
  ...traceFilterParams(q),
});

/**
 * Sampled traces, newest first, one event per trace, filtered by version, segment and time; `failed` keeps the
 * failure candidates (which signals are negative is decided in TypeScript, so a page may hold fewer failures).
 * `ids`: only these traces (the same event of each as in the whole list).
 */
export const sampledTraces = async (
  client: Querier,
  q: TraceListQuery & { limit: number; offset?: number; ids?: readonly string[] },
) =>
  select(
    client,
    StoredTraceRow,
    `SELECT ${STORED_TRACE_COLUMNS}
     FROM traces FINAL
     WHERE ${TRACE_LIST_WHERE}
     ${TRACE_LIST_ORDER}
     LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { ...traceListParams(q, q.ids), offset: q.offset ?? 0, limit: q.limit },
  );

/** How many traces `sampledTraces` lists in all (without `failed`: with it, see `failureCandidateSignals`). */
export const sampledTraceCount = async (client: Querier, q: TraceListQuery): Promise<number> => {
  const [row] = await select(
    client,
    z.object({ total: z.coerce.number() }),
    `SELECT uniqExact(trace_id) AS total
     FROM (SELECT trace_id, toUnixTimestamp64Milli(occurred_at) AS occurred_at FROM traces FINAL WHERE ${TRACE_LIST_WHERE})`,
    traceListParams(q),
  );
  return row?.total ?? 0;
};

/**
 * The failure candidates of the list, in its order, with only what decides whether one is a failure (its failed
 * graders, error, user signals): a few bytes per trace, so the list's failures can be counted and paged exactly
 * without reading the traces' payloads.
 */
export const failureCandidateSignals = async (client: Querier, q: Omit<TraceListQuery, 'failed'>) =>
  select(
    client,
    z.object({
      trace_id: z.string(),
      failed_graders: z.array(z.string()),
      error_kind: z.string().nullable(),
      user_signals: z.record(z.string(), z.string()),
    }),
    `SELECT trace_id, failed_graders, error_kind, user_signals FROM (
       SELECT trace_id, toUnixTimestamp64Milli(occurred_at) AS occurred_at, revision, event_id, error_kind, user_signals,
              arrayMap(v -> tupleElement(v, 'grader'),
                       arrayFilter(v -> coalesce(tupleElement(v, 'passed'), true) = false, verdicts)) AS failed_graders
       FROM traces FINAL
       WHERE ${TRACE_LIST_WHERE}
       ${TRACE_LIST_ORDER})
     ORDER BY occurred_at DESC, trace_id`,
    traceListParams({ ...q, failed: true }),
  );

/** The versions and segments that have sampled traces, for the list's filters. */
export const traceFacets = async (client: Querier) =>
  select(
    client,
    z.object({ agent_versions: z.array(z.string()), segments: z.array(z.string()) }),
    `SELECT arraySort(groupUniqArray(agent_version)) AS agent_versions, arraySort(groupUniqArray(segment)) AS segments
     FROM traces`,
  );
