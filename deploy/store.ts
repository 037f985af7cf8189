import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { applyTraceRetention, storedTraceRetention } from '../sinks/clickhouse/retention.ts';
import { statusFileLock } from '../sinks/clickhouse/statusLock.ts';
import { migrate, type MigrateResult } from '../sinks/clickhouse/migrate.ts';
import { openClickHouse, type StoreClient, type StoreTarget } from '../sinks/clickhouse/connection.ts';
import {
  createClickHouseRowSink,
  type ClickHouseRowSink,
  type ClickHouseRowSinkOptions,
} from '../sinks/clickhouse/rowSink.ts';
import type { PasskConfig } from './config.ts';
import { BackendUnavailable } from '../schemas/errors.ts';
import { asClickHouseError, StoreLocked } from '../sinks/clickhouse/errors.ts';
import { readStoreOwner } from './storeOwner.ts';

/** Raw traces are kept this many days unless configured otherwise (0 = forever). */
export const DEFAULT_TRACE_TTL_DAYS = 90;

/** The configured store: a ClickHouse server when `clickhouse.url` is set, else chDB in `<dataDir>/store`. */
export const storeTarget = (config: PasskConfig): StoreTarget =>
  config.clickhouse.url
    ? {
        kind: 'server',
        url: config.clickhouse.url,
        username: config.clickhouse.username,
        password: config.clickhouse.password,
        database: config.clickhouse.database,
        requestTimeoutMs: config.clickhouse.requestTimeoutMs,
      }
    : { kind: 'embedded', path: join(config.dataDir, 'store'), database: config.clickhouse.database };

export interface OpenStoreOptions {
  /** Apply pending migrations on open (and the trace retention, when set or when the store is new). @default true */
  readonly migrate?: boolean;
  /**
   * Sets the trace retention to this many days (0 = forever), as `passk migrate --trace-ttl-days` does. Unset, the
   * store keeps the retention it has: a new store gets DEFAULT_TRACE_TTL_DAYS once, when its `traces` table is created.
   */
  readonly traceTtlDays?: number;
  readonly log?: (line: string) => void;
}

export type Store = StoreClient & { readonly migrations: MigrateResult | undefined };

/**
 * Opens the configured store and brings its schema up to date.
 * @throws StoreLocked when another process holds the embedded store (the CLI exits with EXIT.unavailable): at once
 * when the owner file names a live process (`readStoreOwner`), else when chDB finds its lock taken.
 */
export const openStore = async (config: PasskConfig, opts: OpenStoreOptions = {}): Promise<Store> => {
  const target = storeTarget(config);
  if (target.kind === 'embedded') {
    mkdirSync(target.path, { recursive: true });
    // A live owner (passk process, passk serve) holds it: said before chDB is asked, which would print its own raw
    // "Code: 76. DB::Exception: Cannot lock file …" line to stderr before failing.
    const owner = readStoreOwner(config.dataDir);
    if (owner) throw new StoreLocked(target.path, owner.pid);
  }
  const store = await openClickHouse(target);
  try {
    if (opts.migrate === false) return { ...store, migrations: undefined };
    const migrations = await migrate(store.client, opts.log ? { log: opts.log } : {});
    // The default once, with the table (migration 1 creates `traces`); after that only when asked, so a retention
    // set by `passk migrate --trace-ttl-days` survives every later open.
    const days = opts.traceTtlDays ?? (migrations.applied.includes(1) ? DEFAULT_TRACE_TTL_DAYS : undefined);
    if (days !== undefined) await applyTraceRetention(store.client, days);
    return { ...store, migrations };
  } catch (e) {
    await store.close();
    throw storeFailure(config, e);
  }
};

/**
 * The trace retention the configured store has now, in days (0 = forever), for a command that does not otherwise
 * open the store (`passk sample`), read without taking a store another process uses: through the local API of the
 * `passk process` / `passk serve` that owns the embedded store (its owner file), else by opening the store without
 * migrating it when nobody holds it (`/proc/locks` lists no lock on chDB's status file), or the server of
 * CLICKHOUSE_URL. Undefined when it cannot be known: no store (or no `traces` table) yet, a store held by a process
 * without an owner file or with an API that does not answer, no `/proc/locks`, a server that does not answer.
 */
export const currentTraceRetention = async (config: PasskConfig): Promise<number | undefined> => {
  const target = storeTarget(config);
  try {
    if (target.kind === 'embedded') {
      const owner = readStoreOwner(config.dataDir);
      if (owner) {
        const { localApiQuerier } = await import('../sinks/clickhouse/localApi.ts');
        return await storedTraceRetention(localApiQuerier(owner.url, owner.token));
      }
      // no store yet (opening one would create it), or one another process holds (chDB would print its lock error)
      if (!existsSync(target.path) || statusFileLock(join(target.path, 'status')).state !== 'free') return undefined;
    }
    const store = await openStore(config, { migrate: false });
    try {
      return await storedTraceRetention(store.client);
    } finally {
      await store.close();
    }
  } catch {
    return undefined;
  }
};

/**
 * What the CLI says of a store's failure: a full disk (on open, or a write while the processors run) becomes a
 * `BackendUnavailable` naming the store's directory (or URL), said in one line with exit 3; anything else as it is.
 */
export const storeFailure = (config: PasskConfig, e: unknown): unknown => {
  if (!diskFull(e) || e instanceof BackendUnavailable) return e;
  const target = storeTarget(config);
  const where = target.kind === 'embedded' ? target.path : target.url;
  return new BackendUnavailable(
    `${where}: the disk is full (ClickHouse: NOT_ENOUGH_SPACE); nothing was written (free space and retry)`,
    e,
  );
};

/** The store refused a write for want of disk (its typed error, or one a MigrationError wraps). */
const diskFull = (e: unknown): boolean => {
  for (let x: unknown = e; x; x = (x as { cause?: unknown }).cause)
    if (asClickHouseError(x)?.type === 'NOT_ENOUGH_SPACE') return true;
  return false;
};

/**
 * The row sink over an open store, always on the store's bulk insert (chDB's raw insert when embedded):
 * without `insertJsonRows` the sink falls back to `client.exec`, which on chDB splices every batch into
 * the SQL text (2.4k instead of 5.8k trials/s end to end, docs/performance.md).
 */
export const storeRowSink = (
  store: Pick<StoreClient, 'client' | 'insertJsonRows'>,
  opts: Omit<ClickHouseRowSinkOptions, 'client' | 'insertJsonRows'> = {},
): ClickHouseRowSink =>
  createClickHouseRowSink({ ...opts, client: store.client, insertJsonRows: store.insertJsonRows });
