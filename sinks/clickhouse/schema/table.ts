/** A table defined once as data; DDL for one node or for a cluster is rendered from it (ddl.ts). */
export interface Column {
  readonly name: string;
  readonly type: string;
  readonly codec?: string;
  /** `MATERIALIZED expr`: computed on insert, never sent by the writer. */
  readonly materialized?: string;
  /** `DEFAULT expr`: the value of a row the writer sent without it, and of rows stored before the column was added. */
  readonly default?: string;
  readonly comment?: string;
}

export interface TableDef {
  readonly name: string;
  readonly comment: string;
  readonly columns: readonly Column[];
  /** `MergeTree` (append-only) or `ReplacingMergeTree` (one row per sorting key; `version` keeps the highest). */
  readonly engine: { readonly kind: 'MergeTree' } | { readonly kind: 'ReplacingMergeTree'; readonly version?: string };
  readonly orderBy: readonly string[];
  readonly partitionBy?: string;
  /** Rows that mean the same fact share these values: the sink's idempotency and dead-letter key. */
  readonly key: readonly string[];
  /** Sharding expression of the Distributed table: every copy of one key must land on one shard. */
  readonly shardBy: string;
  readonly settings?: Readonly<Record<string, string | number>>;
}

export const col = (name: string, type: string, extra: Omit<Column, 'name' | 'type'> = {}): Column => ({
  name,
  type,
  ...extra,
});

/** The envelope columns every event table starts with. */
export const envelopeColumns: readonly Column[] = [
  col('event_id', 'String', { codec: 'ZSTD(1)' }),
  col('occurred_at', "DateTime64(3, 'UTC')", { codec: 'Delta, ZSTD(1)' }),
  col('producer', 'LowCardinality(String)'),
  col('schema_version', 'UInt16'),
];

/** Needed for insert deduplication on a non-replicated MergeTree (chDB or a single server). */
export const DEDUP_WINDOW = { non_replicated_deduplication_window: 1000 } as const;
