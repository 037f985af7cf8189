import { createHash } from 'node:crypto';
import { renderClusterTable, renderCreateTable, type ClusterDdlOptions } from './ddl.ts';
import { col, DEDUP_WINDOW, type TableDef } from './table.ts';
import { TABLES } from './tables.ts';

/**
 * Versioned migrations. Each statement is idempotent (IF NOT EXISTS, ADD COLUMN IF NOT EXISTS …),
 * so a migration interrupted half-way is simply run again. An applied migration is never edited:
 * its checksum is recorded and checked. Changes come as new versions.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /** Statements for one node, or for a cluster (ON CLUSTER, Replicated*, Distributed). */
  readonly up: (cluster?: ClusterDdlOptions) => readonly string[];
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

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'event tables, row state, gate decisions, production windows, dead letters', up: createTables(Object.values(TABLES)) },
];

/** What identifies a migration's content: its single-node statements. */
export const checksumOf = (m: Migration): string => createHash('sha256').update(m.up().join(';\n')).digest('hex').slice(0, 16);

/** Every statement a cluster needs, in order: the migrations table, then each migration. */
export const renderClusterDdl = (cluster: ClusterDdlOptions, migrations: readonly Migration[] = MIGRATIONS): string[] => [
  ...renderClusterTable(MIGRATIONS_TABLE, cluster),
  ...migrations.flatMap((m) => m.up(cluster)),
];
