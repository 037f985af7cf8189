import type { ClickHouseSettings } from '@clickhouse/client';

/**
 * Every setting passk relies on, set explicitly on every request: chDB's defaults differ from a
 * server's (chDB 26.7 has `async_insert=1`, `output_format_json_quote_64bit_integers=0`,
 * `date_time_input_format='best_effort'`; a server has `async_insert=0` and quotes 64-bit integers).
 */
export const STORE_SETTINGS = {
  /** An insert returns once its part is written: the sink's ack means durable. */
  async_insert: 0,
  wait_for_async_insert: 1,
  /** Identical blocks (same insert_deduplication_token) are written once. */
  insert_deduplicate: 1,
  /**
   * No token unless an insert gives its own. Set on every request because chDB's session keeps the last one it was
   * given: without this, a plain insert after a sink's insert reused the sink's token and was dropped as a duplicate.
   */
  insert_deduplication_token: '',
  /** 64-bit integers come back as JSON numbers; counts stay far below 2^53. */
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_64bit_floats: 0,
  output_format_json_quote_decimals: 0,
  /** Named tuples travel as JSON objects both ways. */
  input_format_json_named_tuples_as_objects: 1,
  output_format_json_named_tuples_as_objects: 1,
  /** The writer sends epoch seconds with milliseconds ("1767225600.123"), which `basic` parses exactly. */
  date_time_input_format: 'basic',
  date_time_output_format: 'simple',
  /** A column the table does not have is a bug in the row mapping: fail, do not drop it. */
  input_format_skip_unknown_fields: 0,
  input_format_null_as_default: 1,
  join_use_nulls: 0,
  /** Queries say FINAL where they need it. */
  final: 0,
  /**
   * Safe because every ReplacingMergeTree is partitioned by a column that is part of the row's
   * identity (a duplicate always lands in the same partition), and it makes FINAL much cheaper.
   */
  do_not_merge_across_partitions_select_final: 1,
} satisfies ClickHouseSettings;

const MiB = 2 ** 20;

/**
 * The embedded engine's memory, bounded (issue #32: `passk serve` ≤ 1 GB RSS). Server-level settings: chDB takes
 * them when its engine starts (`clickhouse local`'s `--name=value` arguments, `embeddedServerArgs`), a ClickHouse
 * server from its own configuration (config.xml), so they are never sent with a query (a server refuses them there
 * as unknown settings: they are not query settings). chDB 26's defaults are a server's: caches of 5 GiB each (marks,
 * index marks, primary index), sizes a server machine has and a passk process beside an editor and a browser does
 * not. Queries' own memory is not capped here (`max_server_memory_usage` stays chDB's 90% of the machine): at 2 GiB
 * the bench's generation of 2.5M trials (one INSERT … SELECT, as a migration that rewrites a table is) failed with
 * MEMORY_LIMIT_EXCEEDED, and a failed migration is worse than a large one. While serving, chDB tracks 40–50 MiB.
 */
export const EMBEDDED_SERVER_SETTINGS = {
  /** Marks of the columns read (the store's tables at millions of trials hold a few MiB of them). */
  mark_cache_size: 64 * MiB,
  index_mark_cache_size: 16 * MiB,
  primary_index_cache_size: 64 * MiB,
  /** No decompressed blocks kept: every read decompresses (what the dashboard's timings were measured with). */
  uncompressed_cache_size: 0,
  index_uncompressed_cache_size: 0,
  query_condition_cache_size: 16 * MiB,
  compiled_expression_cache_size: 16 * MiB,
  page_cache_max_size: 0,
} as const;

/** `EMBEDDED_SERVER_SETTINGS` as chDB's connection arguments. */
export const embeddedServerArgs = (): string[] =>
  Object.entries(EMBEDDED_SERVER_SETTINGS).map(([name, value]) => `--${name}=${value}`);
