/** The ClickHouse / chDB adapter: connection, migrations, the batching sink and the typed queries. */
export { execInsert, openClickHouse, type InsertJsonRows, type StoreClient, type StoreTarget } from './connection.ts';
export {
  asClickHouseError,
  classifyFailure,
  MigrationError,
  SinkClosed,
  SinkRejected,
  SinkUnavailable,
  StoreDiskFull,
  StoreLocked,
  type Failure,
} from './errors.ts';
export { STORE_SETTINGS } from './settings.ts';
export { migrate, appliedMigrations, type MigrateResult } from './migrate.ts';
export {
  MIGRATIONS,
  MIGRATIONS_TABLE,
  NEW_STORE_TABLES,
  checksumOf,
  renderClusterDdl,
  type Migration,
} from './schema/migrations.ts';
export { renderClusterTable, renderCreateTable, type ClusterDdlOptions } from './schema/ddl.ts';
export { TABLES, TABLE_NAMES, type TableName } from './schema/tables.ts';
export type { TableDef, Column } from './schema/table.ts';
export { applyTraceRetention, storedTraceRetention, traceRetentionDays } from './retention.ts';
export {
  createClickHouseRowSink,
  type ClickHouseRowSink,
  type ClickHouseRowSinkOptions,
  type Row,
  type RowSink,
  type SinkLogger,
  type SinkStats,
} from './rowSink.ts';
export { eventToRow } from './rows/eventRows.ts';
export { rowToTrial, trialToRow, TrialRow } from './rows/trialRow.ts';
export { select, type Querier } from './queries/select.ts';
export * from './queries/histogram.ts';
export * from './queries/declaredRuns.ts';
export * from './queries/compare.ts';
export * from './queries/report.ts';
export * from './queries/decisions.ts';
export * from './queries/production.ts';
export * from './queries/failures.ts';
export * from './queries/calibration.ts';
export * from './queries/datasets.ts';
export * from './queries/deadLetters.ts';
export { listStoredFailures, traceOfRow, type TraceFilters } from './queries/storedFailures.ts';
export {
  checkConsistency,
  type ConsistencyReport,
  type RowDifference,
  type VersionCheck,
  type VersionNumbers,
} from './consistency.ts';
export { toTrialSink, writeTrialUnit, type TrialUnit } from './trialSink.ts';
export { snapshotRow } from './rows/snapshotRow.ts';
