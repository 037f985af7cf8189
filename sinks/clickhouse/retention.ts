import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';

/**
 * Retention of raw traces. `days` > 0 sets `TTL occurred_at + days`, 0 keeps traces forever.
 * Applied at every start-up; it is metadata only (`materialize_ttl_after_modify = 0`): expired
 * daily partitions are dropped whole by the background TTL merges (`ttl_only_drop_parts`).
 */
export const applyTraceRetention = async (
  client: Pick<ClickHouseClient, 'command' | 'query'>,
  days: number,
): Promise<void> => {
  if (!Number.isInteger(days) || days < 0)
    throw new RangeError(`trace retention must be a whole number of days >= 0, got ${days}`);
  const rs = await client.query({
    query: `SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'traces'`,
    format: 'JSONEachRow',
  });
  const [row] = z.array(z.object({ engine_full: z.string() })).parse(await rs.json());
  if (!row) throw new RangeError('table traces does not exist: run the migrations first');
  const hasTtl = / TTL /.test(row.engine_full);
  if (days === 0) {
    if (hasTtl) await client.command({ query: 'ALTER TABLE traces REMOVE TTL' });
    return;
  }
  // `days` is a checked integer: the DDL statement takes no query parameters here.
  await client.command({
    query: `ALTER TABLE traces MODIFY TTL toDateTime(occurred_at) + toIntervalDay(${days})`,
    clickhouse_settings: { materialize_ttl_after_modify: 0 },
  });
};

/** The trace TTL in days as the store has it (0 = none; undefined when there is no `traces` table yet). */
export const storedTraceRetention = async (client: Pick<ClickHouseClient, 'query'>): Promise<number | undefined> => {
  const rs = await client.query({
    query: `SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'traces'`,
    format: 'JSONEachRow',
  });
  const [row] = z.array(z.object({ engine_full: z.string() })).parse(await rs.json());
  if (!row) return undefined;
  const m = /TTL .*toIntervalDay\((\d+)\)/.exec(row.engine_full);
  return m ? Number(m[1]) : 0;
};

/** The trace TTL in days as the store has it (0 = none). */
export const traceRetentionDays = async (client: Pick<ClickHouseClient, 'query'>): Promise<number> =>
  (await storedTraceRetention(client)) ?? 0;
