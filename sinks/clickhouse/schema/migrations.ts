import { createHash } from 'node:crypto';
import { renderAddColumns, renderClusterTable, renderCreateTable, type ClusterDdlOptions } from './ddl.ts';
import { ROW_STATE_V18_COLUMNS, TRIALS_V19_COLUMNS } from './countsColumns.ts';
import { ROW_STATE_V20_COLUMNS } from './explorerColumns.ts';
import { col, DEDUP_WINDOW, type TableDef } from './table.ts';
import {
  DATASET_ROWS_V4_COLUMNS,
  DATASET_ROWS_V11_COLUMNS,
  LATE_COLUMN,
  MIGRATION_1_TABLES,
  NULLABLE_SINCE_MIGRATION_6,
  NULLABLE_SINCE_MIGRATION_7,
  productionWindowsV1,
  productionWindowsV2AtMigration3,
  ROW_STATE_V8_COLUMNS,
  ROW_STATE_V13_COLUMNS,
  TABLES,
  SAMPLED_RULE_COLUMN,
  TRACES_V5_COLUMNS,
  TRACES_V9_COLUMNS,
  TRIALS_V10_COLUMNS,
  GATE_DECISIONS_V14_COLUMNS,
  GATE_DECISIONS_V16_COLUMNS,
  GATE_DECISIONS_V21_COLUMNS,
  RUNS_V15_COLUMNS,
  MIGRATION_2_TABLES,
  VERSION_SUMMARIES_V17_COLUMNS,
} from './tables.ts';

/**
 * Versioned migrations. Each statement is idempotent (IF NOT EXISTS, ADD COLUMN IF NOT EXISTS …),
 * so a migration interrupted half-way is simply run again. An applied migration is never edited:
 * its checksum is recorded and checked. Changes come as new versions.
 */
/** What the store held when `migrate` began: the versions already applied (absent: a new store). */
export interface MigrationContext {
  readonly applied: ReadonlySet<number>;
}

export interface Migration {
  readonly version: number;
  readonly name: string;
  /**
   * Statements for one node, or for a cluster (ON CLUSTER, Replicated*, Distributed). A data fix may depend on what
   * the store held before (`context`); the checksum is of the statements for a new store (no context).
   */
  readonly up: (cluster?: ClusterDdlOptions, context?: MigrationContext) => readonly string[];
}

export const MIGRATIONS_TABLE: TableDef = {
  name: 'passk_migrations',
  comment: 'Migrations applied to this database',
  columns: [
    col('version', 'UInt32'),
    col('name', 'String'),
    col('checksum', 'String'),
    col('applied_at', "DateTime64(3, 'UTC')"),
  ],
  engine: { kind: 'ReplacingMergeTree' },
  orderBy: ['version'],
  key: ['version'],
  shardBy: 'version',
  settings: DEDUP_WINDOW,
};

const createTables =
  (defs: readonly TableDef[]) =>
  (cluster?: ClusterDdlOptions): string[] =>
    cluster ? defs.flatMap((d) => renderClusterTable(d, cluster)) : defs.map(renderCreateTable);

/**
 * Migration 3: `production_windows` was keyed without the window's end, so windows of different
 * lengths starting together collapsed. A sorting key cannot take an existing column, so the rows go
 * to a new table keyed by start and end. Every statement can run again: the copy reads the old table
 * (left in place) without FINAL, so versions of a window not yet merged away are copied too, and
 * copies of the same row collapse (ReplacingMergeTree on seq).
 */
const rekeyProductionWindows = (cluster?: ClusterDdlOptions): string[] => {
  const v2 = productionWindowsV2AtMigration3;
  const cols = v2.columns.map((c) => `\`${c.name}\``).join(', ');
  const db = cluster ? `\`${cluster.database}\`.` : '';
  return [
    ...createTables([v2])(cluster),
    `INSERT INTO ${db}\`${v2.name}\` (${cols}) SELECT ${cols} FROM ${db}\`${productionWindowsV1.name}\``,
  ];
};

/**
 * Migration 6: a window with no graded trace stored its pass rate (and interval) as 0, which reads as
 * "everything failed"; now NULL, and rows written before with no graded weight become NULL too. Adds the
 * late count. Every statement can run again (MODIFY to the same type is a no-op; the UPDATE rewrites NULLs).
 */
const nullablePassRateAndLate = (cluster?: ClusterDdlOptions): string[] => {
  const name = TABLES.production_windows.name;
  const modify = NULLABLE_SINCE_MIGRATION_6.map((c) => `MODIFY COLUMN \`${c}\` Nullable(Float64)`).join(', ');
  const fix = `UPDATE ${NULLABLE_SINCE_MIGRATION_6.map((c) => `\`${c}\` = NULL`).join(', ')} WHERE weight = 0`;
  const add = renderAddColumns(name, [LATE_COLUMN], cluster);
  if (!cluster)
    return [`ALTER TABLE \`${name}\` ${modify}`, ...add, `ALTER TABLE \`${name}\` ${fix} SETTINGS mutations_sync = 1`];
  const on = `ON CLUSTER '${cluster.cluster}'`;
  const db = cluster.database; // as renderAddColumns writes it (checked there to be an identifier)
  return [
    `ALTER TABLE ${db}.\`${name}_local\` ${on} ${modify}`,
    `ALTER TABLE ${db}.\`${name}\` ${on} ${modify}`,
    ...add,
    `ALTER TABLE ${db}.\`${name}_local\` ${on} ${fix} SETTINGS mutations_sync = 2`,
  ];
};

/**
 * Migration 7: before migration 6, the processors stored the graded count as `sampled` (every sampled trace is
 * graded + ungraded). Rows still holding it are corrected, or, where that cannot be known, made NULL (unknown), never
 * left wrong. A store below 6 when this `migrate` began holds only such rows: each becomes sampled + ungraded, exact.
 * A store already at 6 holds them mixed with right ones, which nothing in a row tells apart in general: a row with
 * sampled < ungraded is certainly old (a right one counts its ungraded traces) and is corrected; one with no ungraded
 * trace is right under both rules; the rest become NULL, which the dashboard shows as unknown until the processors
 * write the window again. `sampled_rule` marks the rows done (and new rows), so running it again changes nothing.
 */
const correctSampled = (cluster?: ClusterDdlOptions, context?: MigrationContext): string[] => {
  const name = TABLES.production_windows.name;
  const modify = `MODIFY COLUMN \`${NULLABLE_SINCE_MIGRATION_7}\` Nullable(UInt64)`;
  const allOld = !context || !context.applied.has(6);
  const value = allOld ? 'sampled + ungraded' : 'if(ungraded = 0 OR sampled < ungraded, sampled + ungraded, NULL)';
  const fix = `UPDATE sampled = ${value}, sampled_rule = 1 WHERE sampled_rule = 0`;
  const add = renderAddColumns(name, [SAMPLED_RULE_COLUMN], cluster);
  if (!cluster)
    return [`ALTER TABLE \`${name}\` ${modify}`, ...add, `ALTER TABLE \`${name}\` ${fix} SETTINGS mutations_sync = 1`];
  const on = `ON CLUSTER '${cluster.cluster}'`;
  const db = cluster.database;
  return [
    `ALTER TABLE ${db}.\`${name}_local\` ${on} ${modify}`,
    `ALTER TABLE ${db}.\`${name}\` ${on} ${modify}`,
    ...add,
    `ALTER TABLE ${db}.\`${name}_local\` ${on} ${fix} SETTINGS mutations_sync = 2`,
  ];
};

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'event tables, row state, gate decisions, production windows, dead letters',
    up: createTables(MIGRATION_1_TABLES),
  },
  {
    version: 2,
    name: 'version_summaries: per-version aggregates per trial partition',
    up: createTables(MIGRATION_2_TABLES),
  },
  {
    version: 3,
    name: 'production windows keyed by start and end (production_windows_v2, rows copied)',
    up: rekeyProductionWindows,
  },
  {
    version: 4,
    name: 'dataset_rows: expected_checks and removed (row removals as tombstones)',
    up: (cluster) => renderAddColumns(TABLES.dataset_rows.name, DATASET_ROWS_V4_COLUMNS, cluster),
  },
  {
    version: 5,
    name: 'traces: actions and tokens (the tool calls and token usage of a trace)',
    up: (cluster) => renderAddColumns(TABLES.traces.name, TRACES_V5_COLUMNS, cluster),
  },
  {
    version: 6,
    name: 'production windows: a missing pass rate is NULL, not 0; the late count',
    up: nullablePassRateAndLate,
  },
  {
    version: 7,
    name: 'production windows: sampled counts every trace in rows an older passk wrote (or NULL, unknown, if it cannot be known)',
    up: correctSampled,
  },
  {
    version: 8,
    name: 'row_state: attempt_records (the one attempt record; older rows read theirs from attempts) and tags',
    up: (cluster) => renderAddColumns(TABLES.row_state.name, ROW_STATE_V8_COLUMNS, cluster),
  },
  {
    version: 9,
    name: 'traces: revision, user and session ids, latency, requested and answering models, cost',
    up: (cluster) => renderAddColumns(TABLES.traces.name, TRACES_V9_COLUMNS, cluster),
  },
  {
    version: 10,
    name: "trials: error_message (a failed or ungraded trial's error in words, e.g. a command agent's stderr)",
    up: (cluster) => renderAddColumns(TABLES.trials.name, TRIALS_V10_COLUMNS, cluster),
  },
  {
    version: 11,
    name: 'dataset_rows: json_fields (an input or expected result that was an object, not text, exports as one)',
    up: (cluster) => renderAddColumns(TABLES.dataset_rows.name, DATASET_ROWS_V11_COLUMNS, cluster),
  },
  {
    version: 12,
    name: 'store_positions: the ledger of log positions each projection has made durable in the store',
    up: createTables([TABLES.store_positions]),
  },
  {
    version: 13,
    name: 'retractions (RunRetracted: a run taken back, per row) and row_state.retracted_runs',
    up: (cluster) => [
      ...createTables([TABLES.retractions])(cluster),
      ...renderAddColumns(TABLES.row_state.name, ROW_STATE_V13_COLUMNS, cluster),
    ],
  },
  {
    version: 14,
    name: "gate_decisions: an adaptive candidate's attempts, rows and max-k (decided after N attempts, fixed k M)",
    up: (cluster) => renderAddColumns(TABLES.gate_decisions.name, GATE_DECISIONS_V14_COLUMNS, cluster),
  },
  {
    version: 15,
    name: 'runs: dataset_path and agent_spec (the dataset file and agent of a passk run, for commands in full)',
    up: (cluster) => renderAddColumns(TABLES.runs.name, RUNS_V15_COLUMNS, cluster),
  },
  {
    version: 16,
    name: 'gate_decisions: unprotected (must-not-break rows the baseline is not stable-correct on, its class and counts)',
    up: (cluster) => renderAddColumns(TABLES.gate_decisions.name, GATE_DECISIONS_V16_COLUMNS, cluster),
  },
  {
    version: 17,
    name: 'version_summaries: ungraded_histogram (rows with ungraded attempts, for the default K: the attempts every row was given)',
    up: (cluster) => renderAddColumns(TABLES.version_summaries.name, VERSION_SUMMARIES_V17_COLUMNS, cluster),
  },
  {
    version: 18,
    name: "row_state: counts_graded and counts_ungraded_failed (each row's counts line, computed on insert from its attempt records)",
    up: (cluster) => renderAddColumns(TABLES.row_state.name, ROW_STATE_V18_COLUMNS, cluster),
  },
  {
    version: 19,
    name: "trials: fingerprint (each trial's fingerprint for the row-state proof, computed on insert)",
    up: (cluster) => renderAddColumns(TABLES.trials.name, TRIALS_V19_COLUMNS, cluster),
  },
  {
    version: 20,
    name: "row_state: attempt_extras and explorer (each attempt's category, latency and cost; the Rows view's counts, computed on insert)",
    up: (cluster) => renderAddColumns(TABLES.row_state.name, ROW_STATE_V20_COLUMNS, cluster),
  },
  {
    version: 21,
    name: "gate_decisions: adaptive_confirmations (of an adaptive candidate's attempts, those of confirmation runs)",
    up: (cluster) => renderAddColumns(TABLES.gate_decisions.name, GATE_DECISIONS_V21_COLUMNS, cluster),
  },
];

/**
 * Every table as the migrations leave it when applied in order from nothing: `TABLES` (each at its latest definition)
 * and `production_windows` (v1, which migration 3 leaves in place). A new store (no migration recorded, none of these
 * tables) gets them directly, one `CREATE TABLE` each, and records every migration as applied (`migrate`): the schema
 * the migrations would leave, byte for byte (`SHOW CREATE TABLE` of every table, test/integration/newStore.int.test.ts),
 * without their ALTERs, which matter only for rows a store already holds and cost a new store ~0.8 s of CPU (each ALTER
 * of `row_state` analyses every MATERIALIZED expression of the table again). A migration that adds or changes a column
 * changes the table's definition in TABLES too; one that adds, drops or renames a table, this list.
 */
export const NEW_STORE_TABLES: readonly TableDef[] = [...Object.values(TABLES), productionWindowsV1];

/** What identifies a migration's content: its single-node statements. */
export const checksumOf = (m: Migration): string =>
  createHash('sha256').update(m.up().join(';\n')).digest('hex').slice(0, 16);

/** Every statement a cluster needs, in order: the migrations table, then each migration. */
export const renderClusterDdl = (
  cluster: ClusterDdlOptions,
  migrations: readonly Migration[] = MIGRATIONS,
): string[] => [...renderClusterTable(MIGRATIONS_TABLE, cluster), ...migrations.flatMap((m) => m.up(cluster))];
