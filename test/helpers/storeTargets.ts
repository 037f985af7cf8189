import { join } from 'node:path';
import type { StoreTarget } from '../../sinks/clickhouse/index.ts';

/** A store a store test runs on; `skip` says why it cannot run here (its tests are reported skipped, with it). */
export interface StoreTargetCase {
  readonly name: string;
  readonly target: StoreTarget;
  readonly skip?: string;
}

/**
 * The stores a store test runs on: embedded chDB under `dir` always, and the ClickHouse server of CLICKHOUSE_URL (in
 * a database of this process's own, so runs do not collide). Without CLICKHOUSE_URL the server's tests are skipped
 * with the reason, so a run shows what it did not cover.
 */
export const storeTargets = (dir: string, database: string): StoreTargetCase[] => [
  { name: 'chDB', target: { kind: 'embedded', path: join(dir, 'store'), database } },
  {
    name: 'ClickHouse server',
    target: {
      kind: 'server',
      url: process.env.CLICKHOUSE_URL ?? '',
      username: process.env.CLICKHOUSE_USER ?? 'default',
      password: process.env.CLICKHOUSE_PASSWORD ?? '',
      database: `${database}_${process.pid}`,
    },
    ...(process.env.CLICKHOUSE_URL ? {} : { skip: 'set CLICKHOUSE_URL to run it against a ClickHouse server' }),
  },
];

/** A describe block's title for a store, with the reason when it is skipped. */
export const onStore = (title: string, c: StoreTargetCase): string =>
  c.skip ? `${title} ${c.name} (skipped: ${c.skip})` : `${title} ${c.name}`;
