import type { Comparison } from '../processors/core/compare.ts';
import type { Divergence } from '../processors/core/checks.ts';
import type { JudgeCalibration } from '../processors/core/judges.ts';
import type { GroupReport } from '../processors/core/report.ts';
import type { DeadLetterSummary } from '../sinks/clickhouse/queries/deadLetters.ts';
import type { RunSource } from '../sinks/clickhouse/queries/runSources.ts';
import type { StabilityClass } from '../schemas/events/decisions.ts';
import type { RowFilters } from './rowQuery.ts';

/**
 * What the dashboard reads: one method per view, each backed by the store's typed queries.
 * The server only serializes what these return; `clickhouseDashboardData` implements them over the
 * ClickHouse (or chDB) queries, and tests may pass anything with the same shape.
 */
export type Scope = { suite: string; dataset_version: string };
export type VersionGroup = Scope & { agent_version: string; rows: number; trials: number; last_at: number | null };

export type Attempt = {
  event_id: string;
  run_id: string;
  attempt: number;
  occurred_at: number;
  passed: boolean | null;
  output: string | null;
  checks: { name: string; answer: string | number | boolean | null; passed?: boolean | null }[];
  failure_category: string | null;
  latency_ms: number | null;
  cost_usd: number | null;
  tokens: { input: number; output: number } | null;
  actions: { tool: string; arguments?: Record<string, unknown> }[];
  retrieved_refs: string[];
};
/** One jsdiff word-level change: text that is in both outputs, only the baseline's (removed) or the candidate's. */
export type DiffPart = { value: string; added: boolean; removed: boolean };
export type RowDrillDown = Scope & {
  row_id: string;
  input: string | null;
  expected: string | null;
  tags: string[];
  versions: { agent_version: string; class: string; n: number; c: number; attempts: Attempt[] }[];
  /** First intermediate check, in order, whose answers differ between the first two versions. */
  first_divergence: Divergence | null;
  /** The first two versions' attempts aligned by position, with a word-level diff of their outputs. */
  aligned: { index: number; baseline: number | null; candidate: number | null; diff: DiffPart[] | null }[];
};

export type ExplorerVersion = {
  class: string;
  /** Graded attempts and passes among them. */
  n: number;
  c: number;
  attempts: number;
  flipping_checks: string[];
  output_flip: boolean | null;
  failure_categories: string[];
  outputs: string[];
  mean_latency_ms: number | null;
  mean_cost_usd: number | null;
};
export type ExplorerRow = {
  row_id: string;
  input: string | null;
  expected: string | null;
  tags: string[];
  must_not_break: boolean;
  versions: Record<string, ExplorerVersion>;
};
/** Every row of one scope, for the row explorer. */
export type ExplorerView = Scope & {
  versions: string[];
  checks: string[];
  failure_categories: string[];
  rows: ExplorerRow[];
};

export type ProductionWindow = {
  agent_version: string;
  segment: string;
  /** The online grader whose verdicts the window counts; `none` holds the traces no grader judged (never a rate). */
  grader: string;
  size: string;
  start: number;
  end: number;
  /** Every sampled trace of the window… (null: unknown, in a window an older passk stored and migration 7 could not correct) */
  traces: number | null;
  /** …and those of them with a verdict (null when `traces` is unknown). */
  graded: number | null;
  /** Sampling-weighted (Horvitz–Thompson) pass rate with its interval; null when nothing is graded (never 0). */
  pass_rate: number | null;
  interval: [number, number] | null;
  /** Traces that arrived after the window closed (stored, in no sum); null where the processors have not counted. */
  late: number | null;
};
export type ProductionAlert = {
  alert_id: string;
  raised_at: number;
  agent_version: string;
  segment: string;
  kind: string;
  severity: string;
  message: string;
  window_start: number | null;
  /** The window's pass rate, and the offline pass@1 it fell below. */
  value: number | null;
  threshold: number | null;
};
export type RepeatedInputFlip = {
  input_fingerprint: string;
  agent_version: string;
  traces: number;
  verdicts: Record<string, number>;
  trace_ids: string[];
};
export type ProductionView = {
  windows: ProductionWindow[];
  alerts: ProductionAlert[];
  repeated_input_flips: RepeatedInputFlip[];
};
/** A reviewer's confirmation of a trace (FailureConfirmed, as stored). */
export type TraceConfirmation = {
  /** The FailureConfirmed's id: the same whether it came from the CLI or the dashboard. */
  event_id: string;
  dataset_id: string;
  reviewer: string;
  expected: string;
  note: string | null;
  occurred_at: number;
};
/** The dataset row a confirmed trace became. */
export type TraceDatasetRow = { dataset_id: string; dataset_version: string; row_id: string };
/** A sampled production trace, as the provenance link of a dataset row shows it. */
export type TraceView = {
  trace_id: string;
  occurred_at: number;
  agent_version: string;
  segment: string;
  input_fingerprint: string;
  sampling_probability: number;
  verdicts: { grader: string; passed: boolean | null }[];
  input: string | null;
  output: string | null;
  error_kind?: string | null;
  user_signals?: Record<string, string>;
  user_id?: string | null;
  session_id?: string | null;
  /** The request's duration (its root span's), ms. */
  latency_ms?: number | null;
  model?: string | null;
  response_model?: string | null;
  cost_usd?: number | null;
  tokens_input?: number | null;
  tokens_output?: number | null;
  confirmation?: TraceConfirmation | null;
  dataset_row?: TraceDatasetRow | null;
};
/** One line of the sampled-trace list: the trace, why it looks like a failure (none: it does not), its confirmation. */
export type TraceListItem = Omit<TraceView, 'input_fingerprint'> & { why: string[] };
export type TraceQuery = {
  /** Only traces with a failure signal (a failed grader, an error, negative feedback). */
  failed?: boolean;
  agent_version?: string;
  segment?: string;
  /** Milliseconds since the epoch, [from, to). */
  from?: number;
  to?: number;
  /** The page: `limit` traces (default 200) after the first `offset` (default 0) of the list. */
  limit?: number;
  offset?: number;
  user_id?: string;
  session_id?: string;
  /** The requested or the answering model. */
  model?: string;
  min_latency_ms?: number;
};
export type TraceList = {
  /** One page of the list, newest first. */
  traces: TraceListItem[];
  /** Where the page starts in the list, and the list's length: every trace the filters keep. */
  offset: number;
  total: number;
  /** Every version and segment with sampled traces, for the filters. */
  agent_versions: string[];
  segments: string[];
  /** Dataset ids a confirmed failure can join. */
  datasets: string[];
};

export type DatasetRowView = {
  row_id: string;
  tags: string[];
  expected: string | null;
  provenance: { kind: string; trace_id?: string; note?: string };
};
export type DatasetVersionView = {
  dataset_id: string;
  dataset_version: string;
  created_at: number | null;
  rows: number;
  /** Rows of the previous version of the dataset this version removed. */
  removed: string[];
  must_not_break: DatasetRowView[];
  /** Rows that came from confirmed production failures, with the trace they came from. */
  from_production: DatasetRowView[];
};

/** One gate decision as the Gates view shows it. */
export type GateView = {
  gate_id: string;
  occurred_at: number;
  suite: string;
  dataset_version: string;
  baseline: string;
  candidate: string;
  verdict: 'pass' | 'fail';
  reasons: { rule: string; passed: boolean; detail: string; rows: string[] }[];
  /** Rows whose attempts are listed as the verdict's evidence. */
  evidence_rows: number;
  repeated_verdict: boolean;
  /**
   * An adaptive candidate: its attempts the decision took (of them, `confirmations` from confirmation runs, when the
   * verdict recorded it), against fixed k = max-k on every row.
   */
  adaptive?: { attempts: number; confirmations?: number; rows: number; max_k: number };
  /**
   * Must-not-break rows the gate cannot protect: the baseline is not stable-correct on them (it flips, or is
   * stable-wrong), so no rule binds (status `not_covered` in GateEvaluated.must_not_break). With the baseline's
   * class and its correct over graded attempts. Empty when there are none, or the verdict did not record them.
   */
  unprotected: {
    suite: string;
    dataset_version: string;
    row_id: string;
    baseline: { class: StabilityClass; c: number; n: number };
  }[];
};

export interface DashboardData {
  /** Changes whenever anything the dashboard shows may have changed. */
  watermark(): Promise<string>;
  groups(): Promise<VersionGroup[]>;
  /** The report numbers of every agent version on one suite and dataset version. */
  overview(scope: Scope): Promise<GroupReport[]>;
  /** The comparison, plus the ids of the must-not-break rows in it. */
  compare(
    q: Scope & { baseline: string; candidate: string },
  ): Promise<(Comparison & { must_not_break_rows: string[]; run_sources?: Record<string, RunSource> }) | null>;
  row(q: Scope & { row_id: string; versions: readonly string[] }): Promise<RowDrillDown | null>;
  /** One page of the scope's rows with their per-version summary (the row explorer), filtered and sorted. */
  rows(q: Scope & RowFilters): Promise<RowPage>;
  /** Gate decisions, newest first. */
  gates(q: { suite?: string }): Promise<GateView[]>;
  production(): Promise<ProductionView>;
  /** One sampled trace, or null when it is not (or no longer) stored. */
  trace(q: { trace_id: string }): Promise<TraceView | null>;
  /** Sampled traces, newest first, filtered (the Production view's review list). */
  traces(q: TraceQuery): Promise<TraceList>;
  judges(): Promise<JudgeCalibration[]>;
  datasets(): Promise<DatasetVersionView[]>;
  /** Records the processors could not decode or validate, and rows the store refused, newest first. */
  deadLetters(): Promise<DeadLetterSummary>;
}

export type { DeadLetterSummary, StoredDeadLetter } from '../sinks/clickhouse/queries/deadLetters.ts';

export type RowPage = Omit<ExplorerView, 'rows'> & {
  baseline: string | null;
  candidate: string | null;
  /** Every tag of the scope's rows, for the filter. */
  tags: string[];
  /** Rows in the scope, and rows the filters keep. */
  rows_total: number;
  total: number;
  offset: number;
  limit: number;
  rows: ExplorerRow[];
  /** Where `row` is among the kept rows, with its neighbours; null when it is not among them (or not asked). */
  row_at: { index: number; prev: string | null; next: string | null } | null;
};
