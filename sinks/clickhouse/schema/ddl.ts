import type { Column, TableDef } from './table.ts';

/**
 * DDL rendered from the table definitions. One node (chDB or a single server) gets the tables as
 * defined; a cluster gets, from the same definitions, a `Replicated*` table `<name>_local` on every
 * node plus a `Distributed` table `<name>` over it, both `ON CLUSTER`. Queries use `<name>` either way.
 */

export interface ClusterDdlOptions {
  /** Cluster name from `remote_servers`. */
  readonly cluster: string;
  /** Database the tables live in (the Distributed engine needs it by name). */
  readonly database: string;
  /** Keeper path of each replicated table. @default '/clickhouse/tables/{shard}/{database}/{table}' */
  readonly zooPath?: string;
  /** @default '{replica}' */
  readonly replica?: string;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ident = (name: string): string => {
  if (!IDENT.test(name)) throw new RangeError(`not an identifier: ${name}`);
  return name;
};
const quote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

const renderColumn = (c: Column): string =>
  [
    `\`${ident(c.name)}\` ${c.type}`,
    c.materialized ? `MATERIALIZED ${c.materialized}` : '',
    c.default ? `DEFAULT ${c.default}` : '',
    c.comment ? `COMMENT ${quote(c.comment)}` : '',
    c.codec ? `CODEC(${c.codec})` : '',
  ]
    .filter(Boolean)
    .join(' ');

const engineArgs = (def: TableDef): string[] =>
  def.engine.kind === 'ReplacingMergeTree' && def.engine.version ? [def.engine.version] : [];

const body = (def: TableDef, engine: string, settings: Readonly<Record<string, string | number>>): string => {
  const entries = Object.entries(settings);
  return [
    `(\n  ${def.columns.map(renderColumn).join(',\n  ')}\n)`,
    `ENGINE = ${engine}`,
    def.partitionBy ? `PARTITION BY ${def.partitionBy}` : '',
    `ORDER BY (${def.orderBy.map((c) => `\`${ident(c)}\``).join(', ')})`,
    entries.length
      ? `SETTINGS ${entries.map(([k, v]) => `${ident(k)} = ${typeof v === 'number' ? v : quote(v)}`).join(', ')}`
      : '',
    `COMMENT ${quote(def.comment)}`,
  ]
    .filter(Boolean)
    .join('\n');
};

/** `CREATE TABLE IF NOT EXISTS` for one node (chDB or a single server), in the client's database. */
export const renderCreateTable = (def: TableDef): string => {
  const args = engineArgs(def);
  const engine = `${def.engine.kind}${args.length ? `(${args.join(', ')})` : ''}`;
  return `CREATE TABLE IF NOT EXISTS \`${ident(def.name)}\`\n${body(def, engine, def.settings ?? {})}`;
};

/** The cluster variant: a replicated local table on every node and a Distributed table over it. */
export const renderClusterTable = (def: TableDef, opts: ClusterDdlOptions): [local: string, distributed: string] => {
  const db = ident(opts.database);
  const cluster = quote(opts.cluster);
  const local = `${ident(def.name)}_local`;
  const args = [
    quote(opts.zooPath ?? '/clickhouse/tables/{shard}/{database}/{table}'),
    quote(opts.replica ?? '{replica}'),
    ...engineArgs(def),
  ];
  // Replicated tables deduplicate inserts by themselves; the non-replicated window is not needed.
  const { non_replicated_deduplication_window: _unused, ...settings } = def.settings ?? {};
  return [
    `CREATE TABLE IF NOT EXISTS ${db}.\`${local}\` ON CLUSTER ${cluster}\n${body(def, `Replicated${def.engine.kind}(${args.join(', ')})`, settings)}`,
    `CREATE TABLE IF NOT EXISTS ${db}.\`${def.name}\` ON CLUSTER ${cluster} AS ${db}.\`${local}\`\n` +
      `ENGINE = Distributed(${cluster}, ${quote(db)}, ${quote(local)}, ${def.shardBy})`,
  ];
};

/**
 * `ALTER TABLE … ADD COLUMN IF NOT EXISTS` (idempotent): on one node, the table; on a cluster, the
 * local replicated table and the Distributed table over it, both `ON CLUSTER`.
 */
export const renderAddColumns = (table: string, columns: readonly Column[], cluster?: ClusterDdlOptions): string[] => {
  const adds = columns.map((c) => `ADD COLUMN IF NOT EXISTS ${renderColumn(c)}`).join(', ');
  if (!cluster) return [`ALTER TABLE \`${ident(table)}\` ${adds}`];
  const db = ident(cluster.database);
  const on = `ON CLUSTER ${quote(cluster.cluster)}`;
  return [
    `ALTER TABLE ${db}.\`${ident(table)}_local\` ${on} ${adds}`,
    `ALTER TABLE ${db}.\`${ident(table)}\` ${on} ${adds}`,
  ];
};
