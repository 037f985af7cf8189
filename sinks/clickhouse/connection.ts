import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  createClient,
  drainStream,
  parseError,
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  type ClickHouseSettings,
} from '@clickhouse/client';
import { StoreLocked } from './errors.ts';
import { embeddedServerArgs, STORE_SETTINGS } from './settings.ts';
import { statusFileLock } from './statusLock.ts';

/** Where the store is: a ClickHouse server over HTTP(S), or embedded chDB in a local directory. */
export type StoreTarget =
  | { kind: 'server'; url: string; username?: string; password?: string; database: string; requestTimeoutMs?: number }
  | { kind: 'embedded'; path: string; database: string };

/** Inserts a body of JSON lines (JSONEachRow) into a table; resolves once the part is written. */
export type InsertJsonRows = (table: string, body: Buffer, settings?: ClickHouseSettings) => Promise<void>;

export interface StoreClient {
  readonly client: ClickHouseClient;
  readonly kind: StoreTarget['kind'];
  readonly database: string;
  /**
   * The bulk insert the sink uses. On a server it is `client.exec`. On chDB it is the connection's
   * raw insert, which hands the bytes to the engine's parser: the generic path splices the body into
   * the SQL text, which measured 5–10× slower for 10k-row batches of trials.
   */
  readonly insertJsonRows: InsertJsonRows;
  close(): Promise<void>;
}

/** `INSERT … FORMAT JSONEachRow` through the client: the path for a ClickHouse server. */
export const execInsert =
  (client: Pick<ClickHouseClient, 'exec'>): InsertJsonRows =>
  async (table, body, settings) => {
    const result = await client.exec({
      query: `INSERT INTO ${table} FORMAT JSONEachRow`,
      values: Readable.from([body], { objectMode: false }),
      ...(settings ? { clickhouse_settings: settings } : {}),
    });
    await drainStream(result.stream);
  };

interface ChdbRawInsert {
  chdb: {
    rawInsert(p: {
      table: string;
      values: Buffer;
      format: 'JSONEachRow';
      settings?: Record<string, string | number | boolean>;
    }): Promise<unknown>;
  };
}

/**
 * chDB's raw insert. Its errors carry the engine's `Code: N. DB::Exception: … (TYPE)` text; they are
 * turned into the typed `ClickHouseError` by clickhouse-js's own `parseError`, exactly as the
 * connection does for every other request, so the sink classifies both paths by the same typed fields.
 */
const chdbInsert =
  (connection: ChdbRawInsert, database: string): InsertJsonRows =>
  async (table, body, settings) => {
    const merged = { ...STORE_SETTINGS, ...settings } as unknown as Record<string, string | number | boolean>;
    try {
      await connection.chdb.rawInsert({
        table: `${database}.${table}`,
        values: body,
        format: 'JSONEachRow',
        settings: merged,
      });
    } catch (e) {
      const typed = parseError(e instanceof Error ? e.message : String(e));
      if (typed !== e) (typed as Error & { cause?: unknown }).cause = e;
      throw typed;
    }
  };

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

const openEmbedded = async (
  path: string,
): Promise<{ client: ClickHouseClient; connection: ChdbRawInsert; release: () => void }> => {
  // Held by another process (chDB's status file locked, as /proc/locks says): said before chDB is asked, which prints
  // its own raw "Code: 76. DB::Exception: Cannot lock file …" line to stderr before failing. A holder that has written
  // no owner file yet (a passk process still starting, a report --from-store, an app) is found this way. The pid in
  // the file alone is not believed: a crash leaves the file and its pid behind, unlocked, and that pid may since be
  // any process. Unlocked, or no /proc/locks to ask (macOS): chDB answers, and its lock error is said below.
  const lock = statusFileLock(join(path, 'status'));
  if (lock.state === 'locked' && lock.pid !== process.pid) throw new StoreLocked(path, lock.pid);
  const [{ Session }, { createChdbConnection }] = await Promise.all([import('chdb'), import('chdb/connection')]);
  let bounds: { close(): void } | undefined;
  try {
    // The engine's memory bounds (EMBEDDED_SERVER_SETTINGS) are arguments of the connection that starts it, which
    // chDB's client connection does not take: this session starts the engine with them, and the client's connection
    // (same directory, same engine) is opened beside it. Kept open as long as the client. Where the engine already
    // runs in this process (a second store opened on the same directory), it keeps the bounds it started with.
    bounds = new Session(path, { connectionArgs: embeddedServerArgs() });
    // chDB implements the Connection of its own @clickhouse/client-common copy (1.23.0); same shape.
    const connection = createChdbConnection({ path }) as unknown as NonNullable<
      ClickHouseClientConfigOptions['connection']
    >;
    const held = bounds;
    return {
      client: createClient({ connection, clickhouse_settings: STORE_SETTINGS }),
      connection: connection as unknown as ChdbRawInsert,
      release: () => held.close(),
    };
  } catch (e) {
    bounds?.close();
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
    const { client, connection, release } = await openEmbedded(target.path);
    try {
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${target.database}` });
      // chDB keeps one session per connection, so USE holds for every later request.
      await client.command({ query: `USE ${target.database}` });
    } catch (e) {
      await client.close();
      release();
      throw e;
    }
    return {
      client,
      kind: 'embedded',
      database: target.database,
      insertJsonRows: chdbInsert(connection, target.database),
      close: async () => {
        try {
          await client.close();
        } finally {
          release();
        }
      },
    };
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
  return {
    client,
    kind: 'server',
    database: target.database,
    insertJsonRows: execInsert(client),
    close: () => client.close(),
  };
};
