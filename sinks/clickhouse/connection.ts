import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type ClickHouseClient, type ClickHouseClientConfigOptions } from '@clickhouse/client';
import { StoreLocked } from './errors.ts';
import { STORE_SETTINGS } from './settings.ts';

/** Where the store is: a ClickHouse server over HTTP(S), or embedded chDB in a local directory. */
export type StoreTarget =
  | { kind: 'server'; url: string; username?: string; password?: string; database: string; requestTimeoutMs?: number }
  | { kind: 'embedded'; path: string; database: string };

export interface StoreClient {
  readonly client: ClickHouseClient;
  readonly kind: StoreTarget['kind'];
  readonly database: string;
  close(): Promise<void>;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Who holds the store: chDB writes "PID: 12201" to `<path>/status` and keeps it locked while open.
 * `held` is false when there is no such file (then the failure has another cause).
 */
const holder = (path: string): { held: boolean; pid?: number } => {
  let text: string;
  try {
    text = readFileSync(join(path, 'status'), 'utf8');
  } catch {
    return { held: false };
  }
  const pid = Number(/^PID:\s*(\d+)/m.exec(text)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return { held: true };
  try {
    process.kill(pid, 0);
    return { held: true, pid };
  } catch {
    return { held: true };
  }
};

/** A chDB connection error at open time means the directory is locked (by us or another process). */
const isChdbConnectionError = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === 'CHDB_CONNECTION';

const openEmbedded = async (path: string): Promise<ClickHouseClient> => {
  const { createChdbConnection } = await import('chdb/connection');
  try {
    // chDB implements the Connection of its own @clickhouse/client-common copy (1.23.0); same shape.
    const connection = createChdbConnection({ path }) as unknown as NonNullable<ClickHouseClientConfigOptions['connection']>;
    return createClient({ connection, clickhouse_settings: STORE_SETTINGS });
  } catch (e) {
    if (!isChdbConnectionError(e)) throw e;
    const h = holder(path);
    // No status file: not a lock but, e.g., another directory already open in this process.
    if (!h.held) throw e;
    throw new StoreLocked(path, h.pid, e);
  }
};

/**
 * Opens one `@clickhouse/client` on either backend, creates the database and pins the client to it,
 * so every DDL statement, insert and query below uses unqualified table names on both.
 * @throws StoreLocked when another process holds the embedded store.
 */
export const openClickHouse = async (target: StoreTarget): Promise<StoreClient> => {
  if (!IDENTIFIER.test(target.database)) throw new RangeError(`not a database name: ${target.database}`);
  if (target.kind === 'embedded') {
    const client = await openEmbedded(target.path);
    await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${target.database}` });
    // chDB keeps one session per connection, so USE holds for every later request.
    await client.command({ query: `USE ${target.database}` });
    return { client, kind: 'embedded', database: target.database, close: () => client.close() };
  }
  const common = {
    url: target.url,
    username: target.username ?? 'default',
    password: target.password ?? '',
    clickhouse_settings: STORE_SETTINGS,
    request_timeout: target.requestTimeoutMs ?? 60_000,
  };
  const bootstrap = createClient(common);
  try {
    await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${target.database}` });
  } finally {
    await bootstrap.close();
  }
  const client = createClient({ ...common, database: target.database });
  return { client, kind: 'server', database: target.database, close: () => client.close() };
};
