import { z } from 'zod';
import { any, select, type Querier } from './select.ts';

export interface TimeRange {
  /** Epoch ms, inclusive. */
  readonly from: number;
  /** Epoch ms, exclusive. */
  readonly to: number;
}

const WindowRow = z.object({
  agent_version: z.string(),
  segment: z.string(),
  grader: z.string(),
  window_start: z.number(),
  window_end: z.number(),
  /**
   * Every sampled trace of the window; `ungraded` of them have no verdict. NULL (unknown) in a row an older passk
   * wrote that migration 7 could not correct.
   */
  sampled: z.number().nullable(),
  ungraded: z.number(),
  weight: z.number(),
  passed_weight: z.number(),
  /** NULL when no trace of the window is graded (never 0). */
  pass_rate: z.number().nullable(),
  ci_low: z.number().nullable(),
  ci_high: z.number().nullable(),
  /** Traces that arrived after the window closed: stored, counted here, in no sum. */
  late: z.number(),
});
export type ProductionWindow = z.infer<typeof WindowRow>;

/**
 * Production windows starting in a time range (latest `seq` of each window), oldest first; windows of
 * every length (1 h, 24 h …) unless `windowMs` picks one. Windows sharing a start are ordered shortest first.
 */
export const productionWindows = async (
  client: Querier,
  opts: TimeRange & { agent_version?: string; segment?: string; windowMs?: number },
): Promise<ProductionWindow[]> =>
  select(
    client,
    WindowRow,
    `SELECT agent_version, segment, grader, toUnixTimestamp64Milli(window_start) AS window_start,
            toUnixTimestamp64Milli(window_end) AS window_end, sampled, ungraded, weight, passed_weight, pass_rate, ci_low, ci_high,
            late
     FROM production_windows_v2 AS w FINAL
     -- qualified: the SELECT aliases window_start (as epoch ms), and an alias would win over the column
     WHERE w.window_start >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND w.window_start < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
       AND ({agent_version:String} = '' OR agent_version = {agent_version:String})
       AND ({segment:String} = '' OR segment = {segment:String})
       AND ({window_ms:Int64} = 0 OR toUnixTimestamp64Milli(w.window_end) - toUnixTimestamp64Milli(w.window_start) = {window_ms:Int64})
     ORDER BY w.window_start, w.window_end, agent_version, segment, grader`,
    {
      from: opts.from,
      to: opts.to,
      agent_version: any(opts.agent_version),
      segment: any(opts.segment),
      window_ms: opts.windowMs ?? 0,
    },
  );

const AlertRow = z.object({
  alert_id: z.string(),
  raised_at: z.number(),
  agent_version: z.string(),
  segment: z.string(),
  kind: z.string(),
  severity: z.string(),
  message: z.string(),
  window_start: z.number().nullable(),
  value: z.number().nullable(),
  threshold: z.number().nullable(),
});
export type Alert = z.infer<typeof AlertRow>;

/** Alerts raised in a time range, newest first. */
export const alerts = async (client: Querier, opts: TimeRange & { agent_version?: string }): Promise<Alert[]> =>
  select(
    client,
    AlertRow,
    `SELECT alert_id, toUnixTimestamp64Milli(raised_at) AS raised_at, agent_version, segment, kind, severity, message,
            if(a.window_start IS NULL, NULL, toUnixTimestamp64Milli(assumeNotNull(a.window_start))) AS window_start, value, threshold
     FROM alerts AS a FINAL
     WHERE a.raised_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND a.raised_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
       AND ({agent_version:String} = '' OR agent_version = {agent_version:String})
     ORDER BY raised_at DESC, alert_id`,
    { from: opts.from, to: opts.to, agent_version: any(opts.agent_version) },
  );

const TraceWindowRow = z.object({
  window_start: z.number(),
  agent_version: z.string(),
  segment: z.string(),
  sampled: z.number(),
  graded: z.number(),
  weight: z.number(),
  passed_weight: z.number(),
  pass_rate: z.number().nullable(),
});

/**
 * Production pass rate per window straight from the sampled traces, for one grader: each graded
 * trace weighs 1/probability (Horvitz–Thompson), so a policy that over-samples failures does not
 * bias the rate. The processors' production windows (`productionWindows`) add intervals and alerts on top.
 */
export const traceWindows = async (
  client: Querier,
  opts: TimeRange & { windowMs: number; grader: string; agent_version?: string },
): Promise<z.infer<typeof TraceWindowRow>[]> =>
  select(
    client,
    TraceWindowRow,
    `SELECT toUnixTimestamp64Milli(toStartOfInterval(occurred_at, toIntervalMillisecond({window_ms:UInt64}))) AS window_start,
            agent_version, segment, count() AS sampled,
            countIf(verdict IS NOT NULL) AS graded,
            sumIf(1 / sampling_probability, verdict IS NOT NULL) AS weight,
            sumIf(1 / sampling_probability, verdict = true) AS passed_weight,
            if(weight > 0, passed_weight / weight, NULL) AS pass_rate
     FROM (
       SELECT occurred_at, agent_version, segment, sampling_probability,
              arrayFirst(v -> v.grader = {grader:String}, verdicts) AS v0,
              if(has(arrayMap(v -> v.grader, verdicts), {grader:String}), v0.passed, NULL) AS verdict
       FROM traces FINAL
       WHERE occurred_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND occurred_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
         AND ({agent_version:String} = '' OR agent_version = {agent_version:String})
     )
     GROUP BY window_start, agent_version, segment
     ORDER BY window_start, agent_version, segment`,
    {
      from: opts.from,
      to: opts.to,
      window_ms: opts.windowMs,
      grader: opts.grader,
      agent_version: any(opts.agent_version),
    },
  );
