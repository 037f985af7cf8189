import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';

/** The part of the client the queries use, so tests and the dashboard can pass any client. */
export type Querier = Pick<ClickHouseClient, 'query'>;

/**
 * Runs a parameterized query (`{name:Type}` placeholders bound from `params`, never spliced into
 * the text) and validates every row against `schema`, so callers get typed, checked rows.
 */
export const select = async <S extends z.ZodType>(
  client: Querier,
  schema: S,
  query: string,
  params: Record<string, unknown> = {},
): Promise<z.output<S>[]> => {
  const rs = await client.query({ query, query_params: params, format: 'JSONEachRow' });
  return z.array(schema).parse(await rs.json());
};

/** Optional filters bind '' for "any": `({v:String} = '' OR col = {v:String})`. */
export const any = (value: string | undefined): string => value ?? '';
