import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_TRACE_TTL_DAYS, storeTarget } from '../../deploy/store.ts';
import { MIGRATIONS, renderClusterDdl } from '../../sinks/clickhouse/index.ts';
import { epilog } from '../format/helpText.ts';
import { configOf, withStore } from '../context.ts';
import { maxOf } from '../../processors/core/arrays.ts';

type MigrateFlags = {
  printClusterDdl?: boolean;
  cluster: string;
  database?: string;
  traceTtlDays?: number;
  json?: boolean;
};

const wholeDays = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError(`--trace-ttl-days must be a whole number >= 0, got "${v}"`);
  return n;
};

export const migrateCommand = (program: Command): void => {
  program
    .command('migrate')
    .description(
      'Applies the store migrations the configured store lacks (embedded chDB in <data-dir>/store, or the\n' +
        'ClickHouse server of CLICKHOUSE_URL), records them in passk_migrations; sets the trace retention\n' +
        '(--trace-ttl-days) only when asked: a new store starts at 90 days, and no other command changes it.\n' +
        'Idempotent: running it again changes nothing. See docs/store.md.',
    )
    .option('--print-cluster-ddl', 'print the ON CLUSTER / Replicated* / Distributed DDL instead of applying anything')
    .option('--cluster <name>', 'cluster name for --print-cluster-ddl', 'passk')
    .option('--database <name>', 'database for --print-cluster-ddl (default: the configured one)')
    .option(
      '--trace-ttl-days <days>',
      `keep raw traces this many days (0 = forever); without it the store keeps its retention (a new store: ${DEFAULT_TRACE_TTL_DAYS})`,
      wholeDays,
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk migrate
  passk migrate --trace-ttl-days 30
  passk migrate --print-cluster-ddl --cluster prod > passk-cluster.sql

Exit codes: 0 ok, 3 the store is unreachable or held by another passk process.`),
    )
    .action(async (flags: MigrateFlags, cmd: Command) => {
      const config = configOf(cmd);
      if (flags.printClusterDdl) {
        const statements = renderClusterDdl({
          cluster: flags.cluster,
          database: flags.database ?? config.clickhouse.database,
        });
        process.stdout.write(statements.map((s) => `${s};\n`).join('\n'));
        return;
      }
      const target = storeTarget(config);
      await withStore(
        cmd,
        async (store) => {
          const applied = store.migrations?.applied ?? [];
          const current = store.migrations?.current ?? 0;
          const where = target.kind === 'embedded' ? target.path : target.url;
          if (flags.json)
            process.stdout.write(
              JSON.stringify({
                store: where,
                database: store.database,
                applied,
                current,
                latest: maxOf(MIGRATIONS.map((m) => m.version)),
              }) + '\n',
            );
          else
            process.stdout.write(
              applied.length
                ? `applied migrations ${applied.join(', ')} to ${where} (database ${store.database}); now at version ${current}\n`
                : `store ${where} (database ${store.database}) is up to date at version ${current}\n`,
            );
        },
        flags.traceTtlDays === undefined ? {} : { traceTtlDays: flags.traceTtlDays },
      );
    });
};
