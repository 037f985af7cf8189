import { ROW_STATE_V18_COLUMNS, TRIALS_V19_COLUMNS } from './countsColumns.ts';
import { ROW_STATE_V20_COLUMNS } from './explorerColumns.ts';
import { col, DEDUP_WINDOW, envelopeColumns, type TableDef } from './table.ts';

/**
 * Every table of the store. Event tables are ReplacingMergeTree keyed by their sorting key, which
 * ends in `event_id`: a replayed event collapses into one row, and queries read with FINAL.
 * Each is partitioned by a function of an immutable column of the event, so a duplicate always
 * meets its original in the same partition (FINAL needs no cross-partition merge).
 */

/** `trials` as migration 1 created it (kept so that migration's statements never change). */
const trialsV1: TableDef = {
  name: 'trials',
  comment: 'TrialRecorded: one attempt of one agent version on one dataset row',
  columns: [
    ...envelopeColumns,
    col('suite', 'LowCardinality(String)'),
    col('dataset_id', 'String', { comment: "'' = absent" }),
    col('dataset_version', 'LowCardinality(String)'),
    col('row_id', 'String'),
    col('run_id', 'String'),
    col('attempt', 'UInt32'),
    col('agent_id', 'String', { comment: "'' = absent" }),
    col('agent_version', 'LowCardinality(String)'),
    col('agent_model', 'LowCardinality(Nullable(String))'),
    col('prompt_hash', 'Nullable(String)'),
    col('tools_hash', 'Nullable(String)'),
    col('config_hash', 'Nullable(String)'),
    col('input', 'Nullable(String)', { codec: 'ZSTD(3)' }),
    col('output', 'Nullable(String)', { codec: 'ZSTD(3)' }),
    col('expected', 'Nullable(String)', { codec: 'ZSTD(3)' }),
    col('passed', 'Nullable(Bool)', { comment: 'NULL = ungradable (infrastructure error)' }),
    col('score', 'Nullable(Float64)'),
    col('grader_kind', 'LowCardinality(String)', { comment: "'' = absent" }),
    col('grader_id', 'LowCardinality(Nullable(String))'),
    col('grader_version', 'LowCardinality(Nullable(String))'),
    col('checks', 'Array(Tuple(name String, answer String, passed Nullable(Bool)))', {
      comment: 'answer is JSON text',
      codec: 'ZSTD(3)',
    }),
    col('actions', 'Array(Tuple(tool String, arguments Nullable(String)))', {
      comment: 'arguments is JSON text',
      codec: 'ZSTD(3)',
    }),
    col('retrieved_refs', 'Array(String)', { codec: 'ZSTD(3)' }),
    col('forbidden_actions', 'Array(LowCardinality(String))'),
    col('error_kind', 'LowCardinality(Nullable(String))'),
    col('failure_category', 'LowCardinality(Nullable(String))'),
    col('cost_usd', 'Nullable(Float64)'),
    col('tokens_input', 'Nullable(UInt32)'),
    col('tokens_output', 'Nullable(UInt32)'),
    col('latency_ms', 'Nullable(Float64)'),
    col('tags', 'Array(LowCardinality(String))'),
    col('must_not_break', 'Bool', { materialized: "has(tags, 'must_not_break')" }),
    col('absent', 'Array(LowCardinality(String))', {
      comment: 'optional fields the event did not have, where NULL or [] already means something',
    }),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['suite', 'agent_version', 'dataset_version', 'row_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(suite, row_id)',
  settings: DEDUP_WINDOW,
};

/** Columns migration 10 adds to `trials`: what went wrong, in words (a command agent's first stderr lines). */
export const TRIALS_V10_COLUMNS = [col('error_message', 'Nullable(String)', { codec: 'ZSTD(3)' })] as const;

const trials: TableDef = { ...trialsV1, columns: [...trialsV1.columns, ...TRIALS_V10_COLUMNS, ...TRIALS_V19_COLUMNS] };

/** `traces` as migration 1 created it (kept so that migration's statements never change). */
const tracesV1: TableDef = {
  name: 'traces',
  comment: 'TraceSampled: a sampled production request (retention: PASSK trace TTL)',
  columns: [
    ...envelopeColumns,
    col('trace_id', 'String'),
    col('agent_version', 'LowCardinality(String)'),
    col('segment', 'LowCardinality(String)'),
    col('input_fingerprint', 'String'),
    col('sampling_policy', 'LowCardinality(String)'),
    col('sampling_probability', 'Float64'),
    col('verdicts', 'Array(Tuple(grader String, passed Nullable(Bool), score Nullable(Float64)))'),
    col('user_signals', 'Map(String, String)', { comment: 'values are JSON text' }),
    col('error_kind', 'LowCardinality(Nullable(String))'),
    col('payload_input', 'Nullable(String)', { codec: 'ZSTD(3)' }),
    col('payload_output', 'Nullable(String)', { codec: 'ZSTD(3)' }),
    col('has_payload', 'Bool'),
    col('tags', 'Array(LowCardinality(String))'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['agent_version', 'segment', 'occurred_at', 'event_id'],
  // Daily partitions so the TTL drops whole parts (ttl_only_drop_parts).
  partitionBy: 'toYYYYMMDD(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(input_fingerprint)',
  settings: { ...DEDUP_WINDOW, ttl_only_drop_parts: 1 },
};

/** Columns migration 5 added to `traces`: the tool calls of a trace (an OTLP trace's `execute_tool` spans), its tokens. */
export const TRACES_V5_COLUMNS = [
  col('actions', 'Array(Tuple(tool String, arguments Nullable(String)))', {
    comment: 'arguments is JSON text',
    codec: 'ZSTD(3)',
  }),
  col('tokens_input', 'Nullable(UInt32)'),
  col('tokens_output', 'Nullable(UInt32)'),
] as const;

/**
 * Columns migration 9 added to `traces`: the trace's revision (a later record of the same trace: readers keep the
 * highest), the end user and session, the request's latency, the requested and answering models, its cost.
 */
export const TRACES_V9_COLUMNS = [
  col('revision', 'UInt32', { default: '0' }),
  col('user_id', 'Nullable(String)'),
  col('session_id', 'Nullable(String)'),
  col('latency_ms', 'Nullable(Float64)'),
  col('model', 'LowCardinality(Nullable(String))'),
  col('response_model', 'LowCardinality(Nullable(String))'),
  col('cost_usd', 'Nullable(Float64)'),
] as const;

const traces: TableDef = {
  ...tracesV1,
  columns: [...tracesV1.columns, ...TRACES_V5_COLUMNS, ...TRACES_V9_COLUMNS],
};

const judgments: TableDef = {
  name: 'judgments',
  comment: "JudgmentRecorded: a judge's verdict on one item",
  columns: [
    ...envelopeColumns,
    col('item_id', 'String'),
    col('judge_id', 'LowCardinality(String)'),
    col('judge_version', 'LowCardinality(Nullable(String))'),
    col('judge_model', 'LowCardinality(Nullable(String))'),
    col('rubric_version', 'LowCardinality(String)'),
    col('kind', 'LowCardinality(String)'),
    col('label', 'Nullable(String)'),
    col('score', 'Nullable(Float64)'),
    col('order', 'Array(String)'),
    col('has_order', 'Bool'),
    col('repeat', 'Nullable(UInt32)'),
    col('output_length', 'Nullable(UInt32)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['judge_id', 'rubric_version', 'item_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(item_id)',
  settings: DEDUP_WINDOW,
};

const labels: TableDef = {
  name: 'labels',
  comment: 'LabelRecorded: a human label on an item a judge graded',
  columns: [
    ...envelopeColumns,
    col('item_id', 'String'),
    col('labeler', 'LowCardinality(String)'),
    col('label', 'Nullable(String)'),
    col('score', 'Nullable(Float64)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['item_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(item_id)',
  settings: DEDUP_WINDOW,
};

/** `dataset_rows` as migration 1 created it (kept so that migration's statements never change). */
const datasetRowsV1: TableDef = {
  name: 'dataset_rows',
  comment: 'DatasetRowUpserted: a row added or changed in a new dataset version, with tags and provenance',
  columns: [
    ...envelopeColumns,
    col('dataset_id', 'LowCardinality(String)'),
    col('dataset_version', 'LowCardinality(String)'),
    col('row_id', 'String'),
    col('input', 'String', { codec: 'ZSTD(3)' }),
    col('expected', 'Nullable(String)', { codec: 'ZSTD(3)' }),
    col('tags', 'Array(LowCardinality(String))'),
    col('must_not_break', 'Bool', { materialized: "has(tags, 'must_not_break')" }),
    col('provenance_kind', 'LowCardinality(String)'),
    col('provenance_trace_id', 'Nullable(String)'),
    col('provenance_failure_event_id', 'Nullable(String)'),
    col('provenance_note', 'Nullable(String)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['dataset_id', 'dataset_version', 'row_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(dataset_id)',
  settings: DEDUP_WINDOW,
};

/** Columns migration 4 added to `dataset_rows`: a row's expected checks, and removals (tombstones). */
export const DATASET_ROWS_V4_COLUMNS = [
  col('expected_checks', 'Nullable(String)', {
    codec: 'ZSTD(3)',
    comment: 'expected answers of intermediate checks, by check name, as a JSON object',
  }),
  col('removed', 'Bool', {
    comment: 'a tombstone: the row is not in this version nor later ones until upserted again',
  }),
] as const;

/** Columns migration 11 adds to `dataset_rows`: which texts are JSON of a non-string value in the rows file. */
export const DATASET_ROWS_V11_COLUMNS = [
  col('json_fields', 'Array(LowCardinality(String))', {
    comment: "'input', 'expected': that text is the JSON of an object, array, number, boolean or null",
  }),
] as const;

/**
 * The table's comment stays migration 1's (no migration changes it; `removed`'s own comment tells of tombstones): a new
 * store gets these definitions directly (`NEW_STORE_TABLES`), and must get what the migrations leave.
 */
const datasetRows: TableDef = {
  ...datasetRowsV1,
  columns: [...datasetRowsV1.columns, ...DATASET_ROWS_V4_COLUMNS, ...DATASET_ROWS_V11_COLUMNS],
};

const confirmedFailures: TableDef = {
  name: 'confirmed_failures',
  comment: 'FailureConfirmed: a reviewer confirmed that a sampled production trace failed',
  columns: [
    ...envelopeColumns,
    col('trace_id', 'String'),
    col('dataset_id', 'LowCardinality(String)'),
    col('input', 'String', { codec: 'ZSTD(3)' }),
    col('expected', 'String', { codec: 'ZSTD(3)' }),
    col('reviewer', 'LowCardinality(String)'),
    col('note', 'Nullable(String)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['dataset_id', 'trace_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(dataset_id)',
  settings: DEDUP_WINDOW,
};

/** Columns migration 14 adds to `gate_decisions`: what an adaptive candidate's decision took (GateEvaluated.adaptive). */
export const GATE_DECISIONS_V14_COLUMNS = [
  col('adaptive_attempts', 'Nullable(UInt32)', { comment: "the candidate's attempts, when it ran adaptively" }),
  col('adaptive_rows', 'Nullable(UInt32)'),
  col('adaptive_max_k', 'Nullable(UInt32)', { comment: 'fixed k would have used rows × max-k' }),
] as const;

const gateDecisionsV1: TableDef = {
  name: 'gate_decisions',
  comment: 'GateEvaluated: a release decision with its reasons and the attempts behind it',
  columns: [
    ...envelopeColumns,
    col('gate_id', 'String'),
    col('suite', 'LowCardinality(String)'),
    col('dataset_id', 'String', { comment: "'' = absent" }),
    col('dataset_version', 'LowCardinality(String)'),
    col('baseline', 'LowCardinality(String)'),
    col('candidate', 'LowCardinality(String)'),
    col('verdict', 'LowCardinality(String)'),
    col('reasons', 'Array(Tuple(rule String, passed Bool, detail String, rows Array(String), has_rows Bool))'),
    col('evidence', 'Array(Tuple(row_id String, baseline_attempts Array(String), candidate_attempts Array(String)))', {
      codec: 'ZSTD(3)',
    }),
    col('repeated_verdict', 'Nullable(Bool)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['suite', 'candidate', 'occurred_at', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(suite, candidate)',
  settings: DEDUP_WINDOW,
};

/**
 * The column migration 16 adds to `gate_decisions`: the must-not-break rows the gate cannot protect (status
 * `not_covered` in GateEvaluated.must_not_break: the baseline is not stable-correct on them), with the baseline's
 * class and counts. Empty on a verdict without them, and on one written before migration 16.
 */
export const GATE_DECISIONS_V16_COLUMNS = [
  col(
    'unprotected',
    'Array(Tuple(suite String, dataset_version String, row_id String, class String, c UInt32, n UInt32))',
    { comment: "must-not-break rows not protected: the baseline's class, correct and graded attempts" },
  ),
] as const;

/**
 * The column migration 21 adds to `gate_decisions`: of an adaptive candidate's attempts, those of confirmation runs
 * (GateEvaluated.adaptive.confirmations), so a view says "96 attempts (93 planned + 3 confirmation)" where the run
 * said 93. Null on a verdict that did not record it.
 */
export const GATE_DECISIONS_V21_COLUMNS = [
  col('adaptive_confirmations', 'Nullable(UInt32)', { comment: 'of adaptive_attempts, those of confirmation runs' }),
] as const;

const gateDecisions: TableDef = {
  ...gateDecisionsV1,
  columns: [
    ...gateDecisionsV1.columns,
    ...GATE_DECISIONS_V14_COLUMNS,
    ...GATE_DECISIONS_V16_COLUMNS,
    ...GATE_DECISIONS_V21_COLUMNS,
  ],
};

/**
 * `row_state` as migration 1 created it (kept so that migration's statements never change): attempts in the
 * shape of RowStateChanged schema version 1 (checks as a map, no event time, no forbidden actions), no tags.
 */
const rowStateV1: TableDef = {
  name: 'row_state',
  comment: "RowStateChanged: the processors' state of one row for one version; the highest seq wins",
  columns: [
    ...envelopeColumns,
    col('suite', 'LowCardinality(String)'),
    col('dataset_version', 'LowCardinality(String)'),
    col('agent_version', 'LowCardinality(String)'),
    col('row_id', 'String'),
    col('seq', 'UInt64'),
    col('n', 'UInt32'),
    col('c', 'UInt32'),
    col('ungraded', 'UInt32'),
    col('class', 'LowCardinality(String)'),
    col(
      'attempts',
      'Array(Tuple(attempt UInt32, run_id String, event_id String, passed Nullable(Bool), output Nullable(String), has_output Bool, checks Map(String, String), has_checks Bool))',
      { codec: 'ZSTD(3)', comment: 'checks values are JSON text' },
    ),
  ],
  engine: { kind: 'ReplacingMergeTree', version: 'seq' },
  orderBy: ['suite', 'agent_version', 'dataset_version', 'row_id'],
  key: ['suite', 'agent_version', 'dataset_version', 'row_id', 'seq'],
  shardBy: 'cityHash64(suite, row_id)',
  settings: DEDUP_WINDOW,
};

/** The time part of a ULID (`id`, a String expression) as DateTime64(3); the epoch for a string that is not one. */
const ulidTime = (id: string): string =>
  `if(match(upper(${id}), '^[0-7][0-9A-HJKMNP-TV-Z]{25}$'), ` +
  `fromUnixTimestamp64Milli(toInt64(arraySum(i -> (position('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substring(upper(${id}), i + 1, 1)) - 1) * pow(32, 9 - i), range(10))), 'UTC'), ` +
  `fromUnixTimestamp64Milli(toInt64(0), 'UTC'))`;

/**
 * Columns migration 8 adds to `row_state`: the attempts as passk's one attempt record (AttemptRecord,
 * schemas/events/decisions.ts) and the row's tags. A row written before (or by an older passk, which sends only
 * `attempts`) reads its attempt records from `attempts` by the DEFAULT: event time from the event id (as a
 * schema version 1 changelog record is read), checks in the map's order, no forbidden actions, no tags.
 */
export const ROW_STATE_V8_COLUMNS = [
  col(
    'attempt_records',
    "Array(Tuple(event_id String, run_id String, attempt UInt32, occurred_at DateTime64(3, 'UTC'), passed Nullable(Bool), output_hash Nullable(String), checks Array(Tuple(name String, answer String)), forbidden_actions Array(String)))",
    {
      codec: 'ZSTD(3)',
      comment: 'in the canonical order (event time, run, attempt, event id); check answers are JSON text',
      default:
        `arrayMap(a -> (a.event_id, a.run_id, a.attempt, ${ulidTime('a.event_id')}, a.passed, a.output, ` +
        "arrayMap((k, v) -> (k, v), mapKeys(a.checks), mapValues(a.checks)), CAST([], 'Array(String)')), attempts)",
    },
  ),
  col('tags', 'Array(LowCardinality(String))', { comment: "the union of the row's trial tags, sorted" }),
] as const;

/** Columns migration 13 adds to `row_state`: the runs retracted on the row (their attempts are gone from it). */
export const ROW_STATE_V13_COLUMNS = [
  col('retracted_runs', 'Array(String)', { comment: 'runs retracted on this row (RunRetracted), sorted' }),
] as const;

const rowState: TableDef = {
  ...rowStateV1,
  columns: [
    ...rowStateV1.columns,
    ...ROW_STATE_V8_COLUMNS,
    ...ROW_STATE_V13_COLUMNS,
    ...ROW_STATE_V18_COLUMNS,
    ...ROW_STATE_V20_COLUMNS,
  ],
};

/**
 * RunRetracted: a run taken back, one row per (row of the run). Every view of the trials leaves out the
 * trials of a retracted run on its row (`NOT_RETRACTED`, queries/retracted.ts), as the processors' fold does.
 */
const retractions: TableDef = {
  name: 'retractions',
  comment: "RunRetracted: a run's trials on one row no longer count (who, when, why)",
  columns: [
    ...envelopeColumns,
    col('retraction_id', 'String'),
    col('run_id', 'String'),
    col('suite', 'LowCardinality(String)'),
    col('dataset_version', 'LowCardinality(String)'),
    col('agent_version', 'LowCardinality(String)'),
    col('row_id', 'String'),
    col('reason', 'String'),
    col('retracted_by', 'String'),
    col('trials', 'UInt64', { comment: "the run's trials on the row when it was retracted" }),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['suite', 'agent_version', 'run_id', 'row_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(suite, row_id)',
  settings: DEDUP_WINDOW,
};

/** Columns migration 15 adds to `runs`: the dataset file and agent a run used (RunFinished, `passk run`). */
export const RUNS_V15_COLUMNS = [
  col('dataset_path', 'Nullable(String)', { comment: 'the dataset file passk run read, as given' }),
  col('agent_spec', 'Nullable(String)', { comment: 'passk run --agent: module, URL or cmd:' }),
] as const;

/** `runs` as migration 1 created it (kept so that migration's statements never change). */
const runsV1: TableDef = {
  name: 'runs',
  comment: 'RunFinished: a producer finished recording one run (complete, partial or aborted)',
  columns: [
    ...envelopeColumns,
    col('run_id', 'String'),
    col('suite', 'LowCardinality(String)'),
    col('dataset_id', 'String', { comment: "'' = absent" }),
    col('dataset_version', 'LowCardinality(String)'),
    col('agent_version', 'LowCardinality(String)'),
    col('agent', 'String', { comment: 'the Agent object as JSON text' }),
    col('status', 'LowCardinality(String)'),
    col('trials', 'UInt64'),
    col('ungraded', 'Nullable(UInt64)'),
    col('rows', 'Nullable(UInt64)'),
    col('k', 'Nullable(UInt32)'),
    col('started_at', "Nullable(DateTime64(3, 'UTC'))"),
    col('note', 'Nullable(String)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['suite', 'agent_version', 'run_id', 'event_id'],
  partitionBy: 'toYYYYMM(occurred_at)',
  key: ['event_id'],
  shardBy: 'cityHash64(suite, run_id)',
  settings: DEDUP_WINDOW,
};

const runs: TableDef = { ...runsV1, columns: [...runsV1.columns, ...RUNS_V15_COLUMNS] };

/**
 * `production_windows` as migration 1 created it, kept only so that migration's statements (and
 * checksum) never change. Its key lacks the window's end: a 1 h and a 24 h window starting at the
 * same time collapsed into one row. Migration 3 replaces it with `production_windows_v2`.
 */
export const productionWindowsV1: TableDef = {
  name: 'production_windows',
  comment: 'Production pass rate per window (Horvitz–Thompson weights), written by the processors',
  columns: [
    col('agent_version', 'LowCardinality(String)'),
    col('segment', 'LowCardinality(String)'),
    col('grader', 'LowCardinality(String)'),
    col('window_start', "DateTime64(3, 'UTC')"),
    col('window_end', "DateTime64(3, 'UTC')"),
    col('sampled', 'UInt64'),
    col('ungraded', 'UInt64'),
    col('weight', 'Float64', { comment: 'sum of 1/p over graded traces' }),
    col('passed_weight', 'Float64'),
    col('pass_rate', 'Float64'),
    col('ci_low', 'Float64'),
    col('ci_high', 'Float64'),
    col('seq', 'UInt64', { comment: 'version of this window; the highest wins' }),
  ],
  engine: { kind: 'ReplacingMergeTree', version: 'seq' },
  orderBy: ['agent_version', 'segment', 'grader', 'window_start'],
  partitionBy: 'toYYYYMM(window_start)',
  key: ['agent_version', 'segment', 'grader', 'window_start', 'seq'],
  shardBy: 'cityHash64(agent_version, segment)',
  settings: DEDUP_WINDOW,
};

/**
 * `production_windows_v2` as migration 3 created it, kept so that migration's statements (and checksum)
 * never change. Migration 6 makes a missing pass rate NULL (not 0) and adds the late count.
 */
export const productionWindowsV2AtMigration3: TableDef = {
  ...productionWindowsV1,
  name: 'production_windows_v2',
  comment:
    'Production pass rate per window (Horvitz–Thompson weights), written by the processors; one row per window (start and end)',
  orderBy: ['agent_version', 'segment', 'grader', 'window_start', 'window_end'],
  key: ['agent_version', 'segment', 'grader', 'window_start', 'window_end', 'seq'],
};

/** Columns migration 6 changes to Nullable: a window with no graded trace has no pass rate and no interval. */
export const NULLABLE_SINCE_MIGRATION_6 = ['pass_rate', 'ci_low', 'ci_high'] as const;
/** The column migration 6 adds. */
export const LATE_COLUMN = col('late', 'UInt64', {
  comment: 'traces that arrived after the window closed: stored as traces, counted here, in no sum',
});

/** Migration 7: `sampled` may be NULL (unknown) for a row an older passk wrote that cannot be corrected. */
export const NULLABLE_SINCE_MIGRATION_7 = 'sampled';
/** The column migration 7 adds: which rule wrote `sampled`. */
export const SAMPLED_RULE_COLUMN = col('sampled_rule', 'UInt8', {
  comment: '0: written before migration 7 (sampled may be the graded count); 1: sampled counts every trace',
});

/**
 * Production windows, keyed by start *and* end: the processors keep windows of several lengths
 * (1 h tumbling, 24 h sliding by 1 h) that share start times. Physically `production_windows_v2`
 * (migration 3 copied the v1 rows over); the sink and the code still call it `production_windows`.
 * `sampled` counts every sampled trace of the window, `ungraded` those without a verdict; NULL (unknown) only in a
 * row an older passk wrote that migration 7 could not correct.
 */
const productionWindows: TableDef = {
  ...productionWindowsV2AtMigration3,
  columns: [
    ...productionWindowsV2AtMigration3.columns.map((c) =>
      (NULLABLE_SINCE_MIGRATION_6 as readonly string[]).includes(c.name) || c.name === NULLABLE_SINCE_MIGRATION_7
        ? { ...c, type: `Nullable(${c.type})` }
        : c,
    ),
    LATE_COLUMN,
    SAMPLED_RULE_COLUMN,
  ],
};

const alerts: TableDef = {
  name: 'alerts',
  comment: 'Production alerts raised by the processors',
  columns: [
    col('alert_id', 'String'),
    col('raised_at', "DateTime64(3, 'UTC')"),
    col('agent_version', 'LowCardinality(String)'),
    col('segment', 'LowCardinality(String)'),
    col('kind', 'LowCardinality(String)'),
    col('severity', 'LowCardinality(String)'),
    col('message', 'String'),
    col('window_start', "Nullable(DateTime64(3, 'UTC'))"),
    col('value', 'Nullable(Float64)'),
    col('threshold', 'Nullable(Float64)'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['agent_version', 'raised_at', 'alert_id'],
  partitionBy: 'toYYYYMM(raised_at)',
  key: ['alert_id'],
  shardBy: 'cityHash64(agent_version)',
  settings: DEDUP_WINDOW,
};

/**
 * `version_summaries` as migration 2 created it (kept so that migration's statements never change).
 * The trial topology's per-version aggregates, one snapshot per (version, trial partition) as of
 * `next_offset` of that partition: the highest offset wins, and a version's summary is the sum of
 * its partitions' latest snapshots (a few rows to read, whatever the number of trials).
 */
const versionSummariesV2: TableDef = {
  name: 'version_summaries',
  comment: "Per-version aggregates per trial partition (the processors' VersionSnapshot); the highest next_offset wins",
  columns: [
    col('suite', 'LowCardinality(String)'),
    col('dataset_version', 'LowCardinality(String)'),
    col('agent_version', 'LowCardinality(String)'),
    col('partition', 'UInt32', { comment: 'partition of passk.trials the snapshot covers' }),
    col('next_offset', 'UInt64', { comment: "the partition's position after the unit that wrote the snapshot" }),
    col('rows', 'UInt64'),
    col('trials', 'UInt64', { comment: 'graded attempts (the sum of n)' }),
    col('passes', 'UInt64'),
    col('ungraded', 'UInt64'),
    col('classes', 'Map(LowCardinality(String), UInt64)', {
      comment: "stability class → rows, at the processors' minAttempts",
    }),
    col('histogram', 'Map(String, UInt64)', { comment: "'n,c' → rows with n graded attempts and c passes" }),
  ],
  engine: { kind: 'ReplacingMergeTree', version: 'next_offset' },
  orderBy: ['suite', 'dataset_version', 'agent_version', 'partition'],
  key: ['suite', 'dataset_version', 'agent_version', 'partition', 'next_offset'],
  shardBy: 'cityHash64(suite, dataset_version, agent_version, partition)',
  settings: DEDUP_WINDOW,
};

/** Migration 17: the rows with ungraded attempts, so a version's default K can count them (as `passk report`). */
export const VERSION_SUMMARIES_V17_COLUMNS = [
  col('ungraded_histogram', 'Map(String, UInt64)', {
    comment: "'n,c,u' → rows of bin 'n,c' with u ≥ 1 ungraded attempts; empty in snapshots written before",
  }),
] as const;

const versionSummaries: TableDef = {
  ...versionSummariesV2,
  columns: [...versionSummariesV2.columns, ...VERSION_SUMMARIES_V17_COLUMNS],
};

/** The tables migration 2 created: an applied migration's statements never change. */
export const MIGRATION_2_TABLES: readonly TableDef[] = [versionSummariesV2];

const deadLetters: TableDef = {
  name: 'dead_letters',
  comment: 'Records that could not be decoded, validated or written, with their original bytes and the reason',
  columns: [
    col('id', 'String', { comment: 'topic/partition/offset, or table/key: the same failure is stored once' }),
    col('recorded_at', "DateTime64(3, 'UTC')", { codec: 'Delta, ZSTD(1)' }),
    col('stage', 'LowCardinality(String)', { comment: "'decode' | 'sink'" }),
    col('source_topic', 'LowCardinality(String)'),
    col('source_partition', 'Int32'),
    col('source_offset', 'Int64'),
    col('source_key', 'String'),
    col('target_table', 'LowCardinality(String)'),
    col('value_base64', 'String', { codec: 'ZSTD(3)' }),
    col('reason', 'String'),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['stage', 'id'],
  key: ['stage', 'id'],
  shardBy: 'cityHash64(id)',
  settings: DEDUP_WINDOW,
};

/**
 * The store's ledger (migration 12): per consumer group (projection), topic and partition, the log position up to
 * which everything that group writes is durable here. Written after the group's rows are flushed and before its
 * offsets are committed to the log, so it is never behind what the store holds; the highest next_offset wins. A
 * store that lost data (deleted, emptied, a part or the metadata gone) has a ledger behind the log's committed
 * offsets, which `passk process` (and `passk rebuild`) mends by replaying the log.
 */
const storePositions: TableDef = {
  name: 'store_positions',
  comment: 'The log positions each projection has made durable in this store; the highest next_offset wins',
  columns: [
    col('projection', 'LowCardinality(String)', { comment: 'the consumer group whose writes this covers' }),
    col('topic', 'LowCardinality(String)'),
    col('partition', 'UInt32'),
    col('next_offset', 'UInt64', { comment: 'every record before it is durable in the store' }),
    col('written_at', "DateTime64(3, 'UTC')"),
  ],
  engine: { kind: 'ReplacingMergeTree', version: 'next_offset' },
  orderBy: ['projection', 'topic', 'partition'],
  key: ['projection', 'topic', 'partition', 'next_offset'],
  shardBy: 'cityHash64(projection, topic, partition)',
  settings: DEDUP_WINDOW,
};

export const TABLES = {
  trials,
  traces,
  judgments,
  labels,
  dataset_rows: datasetRows,
  confirmed_failures: confirmedFailures,
  gate_decisions: gateDecisions,
  row_state: rowState,
  runs,
  production_windows: productionWindows,
  alerts,
  dead_letters: deadLetters,
  version_summaries: versionSummaries,
  store_positions: storePositions,
  retractions,
} as const satisfies Record<string, TableDef>;

/** The tables migration 1 created, in its order: an applied migration's statements never change. */
export const MIGRATION_1_TABLES: readonly TableDef[] = [
  trialsV1,
  tracesV1,
  judgments,
  labels,
  datasetRowsV1,
  confirmedFailures,
  gateDecisionsV1,
  rowStateV1,
  runsV1,
  productionWindowsV1,
  alerts,
  deadLetters,
];

/** The code's name of a table (the sink's `write(table, …)`); `TABLES[name].name` is its name in the store. */
export type TableName = keyof typeof TABLES;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];
