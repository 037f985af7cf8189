import type { DatasetRowUpserted, FailureConfirmed } from '../../../schemas/events/datasets.ts';
import type { GateEvaluated, RowStateChanged } from '../../../schemas/events/decisions.ts';
import type { PasskEvent } from '../../../schemas/events/index.ts';
import type { JudgmentRecorded, LabelRecorded } from '../../../schemas/events/judgments.ts';
import type { RunFinished } from '../../../schemas/events/runFinished.ts';
import type { RunRetracted } from '../../../schemas/events/runRetracted.ts';
import type { TraceSampled } from '../../../schemas/events/traceSampled.ts';
import type { TableName } from '../schema/tables.ts';
import { toDateTime64 } from '../time.ts';
import { trialToRow } from './trialRow.ts';

/** Event → a row of its table. Every event type has exactly one table. */

type Row = Record<string, unknown>;

const envelope = (e: PasskEvent): Row => ({
  event_id: e.event_id,
  occurred_at: toDateTime64(e.occurred_at),
  producer: e.producer,
  schema_version: e.schema_version,
});

const traceRow = (e: TraceSampled): Row => ({
  ...envelope(e),
  trace_id: e.trace_id,
  agent_version: e.agent_version,
  segment: e.segment,
  input_fingerprint: e.input_fingerprint,
  sampling_policy: e.sampling.policy,
  sampling_probability: e.sampling.probability,
  verdicts: (e.verdicts ?? []).map((v) => ({ grader: v.grader, passed: v.passed, score: v.score ?? null })),
  actions: (e.actions ?? []).map((a) => ({
    tool: a.tool,
    arguments: a.arguments === undefined ? null : JSON.stringify(a.arguments),
  })),
  tokens_input: e.tokens?.input ?? null,
  tokens_output: e.tokens?.output ?? null,
  user_signals: Object.fromEntries(Object.entries(e.user_signals ?? {}).map(([k, v]) => [k, JSON.stringify(v)])),
  error_kind: e.error_kind ?? null,
  payload_input: e.payload?.input ?? null,
  payload_output: e.payload?.output ?? null,
  has_payload: e.payload !== undefined,
  tags: e.tags ?? [],
  revision: e.revision ?? 0,
  user_id: e.user_id ?? null,
  session_id: e.session_id ?? null,
  latency_ms: e.latency_ms ?? null,
  model: e.model ?? null,
  response_model: e.response_model ?? null,
  cost_usd: e.cost_usd ?? null,
});

const judgmentRow = (e: JudgmentRecorded): Row => ({
  ...envelope(e),
  item_id: e.item_id,
  judge_id: e.judge.id,
  judge_version: e.judge.version ?? null,
  judge_model: e.judge.model ?? null,
  rubric_version: e.rubric_version,
  kind: e.kind,
  label: e.label ?? null,
  score: e.score ?? null,
  order: e.order ?? [],
  has_order: e.order !== undefined,
  repeat: e.repeat ?? null,
  output_length: e.output_length ?? null,
});

const labelRow = (e: LabelRecorded): Row => ({
  ...envelope(e),
  item_id: e.item_id,
  labeler: e.labeler,
  label: e.label ?? null,
  score: e.score ?? null,
});

const datasetRow = (e: DatasetRowUpserted): Row => ({
  ...envelope(e),
  dataset_id: e.dataset_id,
  dataset_version: e.dataset_version,
  row_id: e.row_id,
  input: e.input,
  expected: e.expected,
  tags: e.tags,
  provenance_kind: e.provenance.kind,
  provenance_trace_id: e.provenance.trace_id ?? null,
  provenance_failure_event_id: e.provenance.failure_event_id ?? null,
  provenance_note: e.provenance.note ?? null,
  expected_checks: e.expected_checks ? JSON.stringify(e.expected_checks) : null,
  removed: e.removed === true,
  json_fields: e.json_fields ?? [],
});

const failureRow = (e: FailureConfirmed): Row => ({
  ...envelope(e),
  trace_id: e.trace_id,
  dataset_id: e.dataset_id,
  input: e.input,
  expected: e.expected,
  reviewer: e.reviewer,
  note: e.note ?? null,
});

const gateRow = (e: GateEvaluated): Row => ({
  ...envelope(e),
  gate_id: e.gate_id,
  suite: e.suite,
  dataset_id: e.dataset_id ?? '',
  dataset_version: e.dataset_version,
  baseline: e.baseline,
  candidate: e.candidate,
  verdict: e.verdict,
  reasons: e.reasons.map((r) => ({
    rule: r.rule,
    passed: r.passed,
    detail: r.detail,
    rows: r.rows ?? [],
    has_rows: r.rows !== undefined,
  })),
  evidence: e.evidence.map((x) => ({
    row_id: x.row_id,
    baseline_attempts: x.baseline_attempts,
    candidate_attempts: x.candidate_attempts,
  })),
  repeated_verdict: e.repeated_verdict ?? null,
  adaptive_attempts: e.adaptive?.attempts ?? null,
  adaptive_rows: e.adaptive?.rows ?? null,
  adaptive_max_k: e.adaptive?.max_k ?? null,
  adaptive_confirmations: e.adaptive?.confirmations ?? null,
  unprotected: (e.must_not_break ?? [])
    .filter((m) => m.status === 'not_covered')
    .map((m) => ({
      suite: m.suite,
      dataset_version: m.dataset_version,
      row_id: m.row_id,
      class: m.baseline.class,
      c: m.baseline.c,
      n: m.baseline.n,
    })),
});

const rowStateRow = (e: RowStateChanged): Row => ({
  ...envelope(e),
  suite: e.suite,
  dataset_version: e.dataset_version,
  agent_version: e.agent_version,
  row_id: e.row_id,
  seq: e.seq,
  n: e.n,
  c: e.c,
  ungraded: e.ungraded,
  class: e.class,
  attempt_records: e.attempt_records.map((a) => ({
    event_id: a.event_id,
    run_id: a.run_id,
    attempt: a.attempt,
    occurred_at: toDateTime64(a.occurred_at),
    passed: a.passed,
    output_hash: a.output_hash,
    checks: a.checks.map((ch) => ({ name: ch.name, answer: JSON.stringify(ch.answer) })),
    forbidden_actions: a.forbidden_actions,
  })),
  tags: e.tags ?? [],
  retracted_runs: e.retracted_runs ?? [],
  attempt_extras: e.attempt_records.map((a) => ({
    failure_category: a.failure_category ?? null,
    latency_ms: a.latency_ms ?? null,
    cost_usd: a.cost_usd ?? null,
  })),
});

const q = JSON.stringify;

/** An attempt of `rowStateRow`, as JSON: the same text as `JSON.stringify` of its mapped object. */
const attemptLine = (a: RowStateChanged['attempt_records'][number]): string => {
  let checks = '[';
  for (let i = 0; i < a.checks.length; i++) {
    const ch = a.checks[i]!;
    checks += `${i > 0 ? ',' : ''}{"name":${q(ch.name)},"answer":${q(q(ch.answer))}}`;
  }
  return (
    `{"event_id":${q(a.event_id)},"run_id":${q(a.run_id)},"attempt":${q(a.attempt)},` +
    `"occurred_at":${q(toDateTime64(a.occurred_at))},"passed":${q(a.passed)},"output_hash":${q(a.output_hash)},` +
    `"checks":${checks}],"forbidden_actions":${q(a.forbidden_actions)}}`
  );
};

/** An attempt's `attempt_extras` element, as JSON: the same text as `JSON.stringify` of its mapped object. */
const extrasLine = (a: RowStateChanged['attempt_records'][number]): string =>
  `{"failure_category":${q(a.failure_category ?? null)},"latency_ms":${q(a.latency_ms ?? null)},` +
  `"cost_usd":${q(a.cost_usd ?? null)}}`;

/** True when a field `JSON.stringify` would leave out (undefined) is there: the line is then built the slow way. */
const hasHoles = (e: RowStateChanged): boolean => {
  if (
    e.event_id === undefined ||
    e.producer === undefined ||
    e.schema_version === undefined ||
    e.suite === undefined ||
    e.dataset_version === undefined ||
    e.agent_version === undefined ||
    e.row_id === undefined ||
    e.seq === undefined ||
    e.n === undefined ||
    e.c === undefined ||
    e.ungraded === undefined ||
    e.class === undefined
  )
    return true;
  for (const a of e.attempt_records) {
    if (
      a.event_id === undefined ||
      a.run_id === undefined ||
      a.attempt === undefined ||
      a.passed === undefined ||
      a.output_hash === undefined ||
      a.forbidden_actions === undefined
    )
      return true;
    for (const ch of a.checks) if (ch.name === undefined || ch.answer === undefined) return true;
  }
  return false;
};

/**
 * The `row_state` line of a RowStateChanged: exactly `JSON.stringify(rowStateRow(e))` (a property test holds it to
 * that), written straight from the record, without the per-attempt and per-check objects the mapping allocates.
 */
export const rowStateLine = (e: RowStateChanged): string => {
  if (hasHoles(e)) return q(rowStateRow(e));
  let attempts = '[';
  let extras = '[';
  for (let i = 0; i < e.attempt_records.length; i++) {
    const a = e.attempt_records[i]!;
    attempts += (i > 0 ? ',' : '') + attemptLine(a);
    extras += (i > 0 ? ',' : '') + extrasLine(a);
  }
  return (
    `{"event_id":${q(e.event_id)},"occurred_at":${q(toDateTime64(e.occurred_at))},"producer":${q(e.producer)},` +
    `"schema_version":${q(e.schema_version)},"suite":${q(e.suite)},"dataset_version":${q(e.dataset_version)},` +
    `"agent_version":${q(e.agent_version)},"row_id":${q(e.row_id)},"seq":${q(e.seq)},"n":${q(e.n)},"c":${q(e.c)},` +
    `"ungraded":${q(e.ungraded)},"class":${q(e.class)},"attempt_records":${attempts}],` +
    `"tags":${q(e.tags ?? [])},"retracted_runs":${q(e.retracted_runs ?? [])},"attempt_extras":${extras}]}`
  );
};

const retractionRow = (e: RunRetracted): Row => ({
  ...envelope(e),
  retraction_id: e.retraction_id,
  run_id: e.run_id,
  suite: e.suite,
  dataset_version: e.dataset_version,
  agent_version: e.agent_version,
  row_id: e.row_id,
  reason: e.reason,
  retracted_by: e.retracted_by,
  trials: e.trials,
});

const runRow = (e: RunFinished): Row => ({
  ...envelope(e),
  run_id: e.run_id,
  suite: e.suite,
  dataset_id: e.dataset_id ?? '',
  dataset_version: e.dataset_version,
  agent_version: e.agent.version,
  agent: JSON.stringify(e.agent),
  status: e.status,
  trials: e.trials,
  ungraded: e.ungraded ?? null,
  rows: e.rows ?? null,
  k: e.k ?? null,
  started_at: e.started_at === undefined ? null : toDateTime64(e.started_at),
  note: e.note ?? null,
  dataset_path: e.dataset_path ?? null,
  agent_spec: e.agent_spec ?? null,
});

/** The line of `eventToRow(e).row` as the sink writes it (`JSON.stringify`), built without the row for a row state. */
export const eventToLine = (e: PasskEvent): { table: TableName; line: string } | undefined => {
  if (e.type === 'RowStateChanged') return { table: 'row_state', line: rowStateLine(e) };
  const stored = eventToRow(e);
  return stored && { table: stored.table, line: JSON.stringify(stored.row) };
};

/**
 * The table an event is stored in, and its row there; undefined for events that only steer the
 * processors (declared comparisons, confirmation requests, closed runs) or that the processors store
 * as rows of their own (window totals and alerts: `production_windows`, `alerts`).
 */
export const eventToRow = (e: PasskEvent): { table: TableName; row: Row } | undefined => {
  switch (e.type) {
    case 'TrialRecorded':
      return { table: 'trials', row: trialToRow(e) };
    case 'TraceSampled':
      return { table: 'traces', row: traceRow(e) };
    case 'JudgmentRecorded':
      return { table: 'judgments', row: judgmentRow(e) };
    case 'LabelRecorded':
      return { table: 'labels', row: labelRow(e) };
    case 'DatasetRowUpserted':
      return { table: 'dataset_rows', row: datasetRow(e) };
    case 'FailureConfirmed':
      return { table: 'confirmed_failures', row: failureRow(e) };
    case 'GateEvaluated':
      return { table: 'gate_decisions', row: gateRow(e) };
    case 'RowStateChanged':
      return { table: 'row_state', row: rowStateRow(e) };
    case 'RunFinished':
      return { table: 'runs', row: runRow(e) };
    case 'RunRetracted':
      return { table: 'retractions', row: retractionRow(e) };
    case 'ComparisonDeclared':
    case 'ConfirmationRequested':
    case 'RunClosed':
    case 'WindowAlertRaised':
    case 'TraceWindowsUpdated':
    case 'AdaptiveRoundDecided':
    case 'GateBookSnapshot':
      return undefined;
  }
};
