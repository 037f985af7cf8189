import { z } from 'zod';
import { StabilityClass } from '../../../schemas/events/decisions.ts';
import { any, select, type Querier } from './select.ts';

const GateRow = z.object({
  event_id: z.string(),
  occurred_at: z.number(),
  gate_id: z.string(),
  suite: z.string(),
  dataset_version: z.string(),
  baseline: z.string(),
  candidate: z.string(),
  verdict: z.enum(['pass', 'fail']),
  failed_rules: z.array(z.string()),
  reasons: z.array(
    z.object({
      rule: z.string(),
      passed: z.boolean(),
      detail: z.string(),
      rows: z.array(z.string()),
      has_rows: z.boolean(),
    }),
  ),
  evidence_rows: z.number(),
  repeated_verdict: z.boolean(),
  /** Verdicts on this (suite, candidate) up to and including this one: > 1 means gate shopping to look at. */
  verdict_number: z.number(),
  /** An adaptive candidate's attempts, rows and max-k (null otherwise). */
  adaptive_attempts: z.number().nullable(),
  adaptive_rows: z.number().nullable(),
  adaptive_max_k: z.number().nullable(),
  /** Of adaptive_attempts, those of confirmation runs (migration 21; null before, and on other verdicts). */
  adaptive_confirmations: z.number().nullable(),
  /** Must-not-break rows the gate cannot protect, with the baseline's class and counts (migration 16). */
  unprotected: z.array(
    z.object({
      suite: z.string(),
      dataset_version: z.string(),
      row_id: z.string(),
      class: StabilityClass,
      c: z.number(),
      n: z.number(),
    }),
  ),
});
export type GateHistoryRow = z.infer<typeof GateRow>;

/** Gate decisions, newest first, with the rules that failed and how many verdicts the candidate had by then. */
export const gateHistory = async (
  client: Querier,
  opts: { suite?: string; candidate?: string; limit?: number } = {},
): Promise<GateHistoryRow[]> =>
  select(
    client,
    GateRow,
    `SELECT event_id, toUnixTimestamp64Milli(occurred_at) AS occurred_at, gate_id, suite, dataset_version, baseline, candidate, verdict,
            arrayMap(r -> r.rule, arrayFilter(r -> NOT r.passed, reasons)) AS failed_rules,
            reasons, length(evidence) AS evidence_rows,
            ifNull(repeated_verdict, false) AS repeated_verdict,
            adaptive_attempts, adaptive_rows, adaptive_max_k, adaptive_confirmations, unprotected,
            row_number() OVER (PARTITION BY suite, candidate ORDER BY occurred_at, event_id) AS verdict_number
     FROM gate_decisions FINAL
     WHERE ({suite:String} = '' OR suite = {suite:String}) AND ({candidate:String} = '' OR candidate = {candidate:String})
     ORDER BY occurred_at DESC, event_id DESC
     LIMIT {limit:UInt32}`,
    { suite: any(opts.suite), candidate: any(opts.candidate), limit: opts.limit ?? 100 },
  );
