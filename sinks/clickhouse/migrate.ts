import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';
import { MigrationError } from './errors.ts';
import { renderCreateTable } from './schema/ddl.ts';
import { checksumOf, MIGRATIONS, MIGRATIONS_TABLE, NEW_STORE_TABLES, type Migration } from './schema/migrations.ts';
import { toDateTime64 } from './time.ts';
import { maxOf } from '../../processors/core/arrays.ts';

export interface MigrateResult {
  /** Versions applied by this call, in order (empty when the store was up to date). */
  readonly applied: number[];
  /** The highest version now applied. */
  readonly current: number;
}

const Applied = z.object({ version: z.number(), name: z.string(), checksum: z.string() });

/** The migrations recorded in the store. */
export const appliedMigrations = async (client: ClickHouseClient): Promise<z.infer<typeof Applied>[]> => {
  await client.command({ query: renderCreateTable(MIGRATIONS_TABLE) });
  const rs = await client.query({
    query: `SELECT version, name, checksum FROM ${MIGRATIONS_TABLE.name} FINAL ORDER BY version`,
    format: 'JSONEachRow',
  });
  return z.array(Applied).parse(await rs.json());
};

const names = NEW_STORE_TABLES.map((d) => `'${d.name}'`).join(', ');

/** The store's tables that exist, with their columns in order (`system.columns`). */
const storeColumns = async (client: ClickHouseClient): Promise<Map<string, string[]>> => {
  const rs = await client.query({
    query:
      `SELECT table, name FROM system.columns WHERE database = currentDatabase() AND table IN (${names}) ` +
      'ORDER BY table, position',
    format: 'JSONEachRow',
  });
  const columns = new Map<string, string[]>();
  for (const { table, name } of z.array(z.object({ table: z.string(), name: z.string() })).parse(await rs.json()))
    columns.set(table, [...(columns.get(table) ?? []), name]);
  return columns;
};

/** Every table of NEW_STORE_TABLES is there with its latest columns, in order. */
const latestSchema = (columns: Map<string, string[]>): boolean =>
  NEW_STORE_TABLES.every((d) => columns.get(d.name)?.join() === d.columns.map((c) => c.name).join());

/**
 * Applies the migrations the store lacks, in version order, and records each one.
 * Safe to run at every start-up and from several processes: statements are idempotent and the
 * record table keeps one row per version.
 *
 * A new store (no migration recorded and none of the store's tables, e.g. not one a `migrate` left half-way) gets the
 * tables as the migrations would leave them directly (`NEW_STORE_TABLES`, one CREATE each, ~0.3 s of CPU on chDB
 * instead of ~1.1 s) and every migration recorded, unless `migrations` is given. Should another process
 * have migrated the same database step by step meanwhile (a server), a table it created first keeps an older shape;
 * then the migrations run in order too, as for any store, and bring it up to date.
 * @throws MigrationError when an applied migration's statements have changed since.
 */
export const migrate = async (
  client: ClickHouseClient,
  opts: {
    /**
     * The migrations to apply, each by its statements even to a new store (tests: a store as an older passk left it,
     * or one migrated step by step from nothing). @default MIGRATIONS, a new store getting NEW_STORE_TABLES directly
     */
    migrations?: readonly Migration[];
    now?: () => number;
    log?: (line: string) => void;
  } = {},
): Promise<MigrateResult> => {
  const migrations = [...(opts.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const done = new Map((await appliedMigrations(client)).map((m) => [m.version, m]));
  const record = async (ms: readonly Migration[]) => {
    const at = toDateTime64((opts.now ?? Date.now)());
    await client.insert({
      table: MIGRATIONS_TABLE.name,
      values: ms.map((m) => ({ version: m.version, name: m.name, checksum: checksumOf(m), applied_at: at })),
      format: 'JSONEachRow',
    });
    for (const m of ms) opts.log?.(`applied migration ${m.version}: ${m.name}`);
  };
  if (done.size === 0 && !opts.migrations && (await storeColumns(client)).size === 0) {
    for (const def of NEW_STORE_TABLES) {
      try {
        await client.command({ query: renderCreateTable(def) });
      } catch (e) {
        throw new MigrationError(`a new store's table ${def.name} could not be created: ${(e as Error).message}`, e);
      }
    }
    if (latestSchema(await storeColumns(client))) {
      await record(migrations);
      const applied = migrations.map((m) => m.version);
      return { applied, current: Math.max(0, maxOf(applied)) };
    }
  }
  const applied: number[] = [];
  const context = { applied: new Set(done.keys()) };
  for (const m of migrations) {
    const checksum = checksumOf(m);
    const previous = done.get(m.version);
    if (previous) {
      if (previous.checksum !== checksum)
        throw new MigrationError(
          `migration ${m.version} (${m.name}) was applied with checksum ${previous.checksum} but is now ${checksum}: ` +
            'applied migrations must not change; add a new version instead',
        );
      continue;
    }
    for (const statement of m.up(undefined, context)) {
      try {
        await client.command({ query: statement });
      } catch (e) {
        throw new MigrationError(`migration ${m.version} (${m.name}) failed: ${(e as Error).message}`, e);
      }
    }
    await record([m]);
    applied.push(m.version);
  }
  return {
    applied,
    current: Math.max(0, maxOf(migrations.map((m) => m.version).filter((v) => done.has(v) || applied.includes(v)))),
  };
};
