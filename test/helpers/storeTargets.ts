import { join } from 'node:path';
import type { StoreTarget } from '../../sinks/clickhouse/index.ts';

/**
 * The stores a store test runs on: embedded chDB under `dir` always, and the ClickHouse server of
 * CLICKHOUSE_URL when it is set (in a database of this process's own, so runs do not collide).
 */
export const storeTargets = (dir: string, database: string): { name: string; target: StoreTarget }[] => [
  { name: 'chDB', target: { kind: 'embedded', path: join(dir, 'store'), database } },
  ...(process.env.CLICKHOUSE_URL
    ? [
        {
          name: 'ClickHouse server',
          target: {
            kind: 'server' as const,
            url: process.env.CLICKHOUSE_URL,
            username: process.env.CLICKHOUSE_USER ?? 'default',
            password: process.env.CLICKHOUSE_PASSWORD ?? '',
            database: `${database}_${process.pid}`,
          },
        },
      ]
    : []),
];
