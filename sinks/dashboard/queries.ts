import { z } from 'zod';
import { select, type Querier } from '../clickhouse/queries/select.ts';

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
  actions: z.array(z.object({ tool: z.string(), arguments: z.string().nullable() })),
  tokens_input: z.number().nullable(),
  tokens_output: z.number().nullable(),
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
              payload_input AS input, payload_output AS output, actions,
              tokens_input, tokens_output
       FROM traces FINAL WHERE trace_id = {trace_id:String}
       ORDER BY occurred_at LIMIT 1`,
    { trace_id },
  );
  if (!t) return null;
  const { graders, passed, ...rest } = t;
  return { ...rest, verdicts: graders.map((grader, i) => ({ grader, passed: passed[i] ?? null })) };
};
