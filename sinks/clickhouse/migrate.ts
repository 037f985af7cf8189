import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';
import { MigrationError } from './errors.ts';
import { renderCreateTable } from './schema/ddl.ts';
import { checksumOf, MIGRATIONS, MIGRATIONS_TABLE, type Migration } from './schema/migrations.ts';
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

/**
 * Applies the migrations the store lacks, in version order, and records each one.
 * Safe to run at every start-up and from several processes: statements are idempotent and the
 * record table keeps one row per version.
 * @throws MigrationError when an applied migration's statements have changed since.
 */
export const migrate = async (
  client: ClickHouseClient,
  opts: { migrations?: readonly Migration[]; now?: () => number; log?: (line: string) => void } = {},
): Promise<MigrateResult> => {
  const migrations = [...(opts.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const done = new Map((await appliedMigrations(client)).map((m) => [m.version, m]));
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
    await client.insert({
      table: MIGRATIONS_TABLE.name,
      values: [{ version: m.version, name: m.name, checksum, applied_at: toDateTime64((opts.now ?? Date.now)()) }],
      format: 'JSONEachRow',
    });
    opts.log?.(`applied migration ${m.version}: ${m.name}`);
    applied.push(m.version);
  }
  return {
    applied,
    current: Math.max(0, maxOf(migrations.map((m) => m.version).filter((v) => done.has(v) || applied.includes(v)))),
  };
};
