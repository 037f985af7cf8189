import type { Command } from 'commander';
import { configFileOf, fromEnv, fromFile, loadConfig } from '../../deploy/config.ts';
import { table, text } from '../format/doc.ts';
import { renderJson, renderTerminal } from '../format/render.ts';

type Source = 'flag' | 'env' | 'file' | 'default';
type Setting = { key: string; value: unknown; source: Source };

/** Values never printed as they are. */
const SECRET = new Set(['clickhouse.password', 'judge.apiKey']);

const leaves = (o: unknown, prefix = ''): [string, unknown][] =>
  o && typeof o === 'object' && !Array.isArray(o)
    ? Object.entries(o).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k))
    : [[prefix, o]];

const has = (layer: Record<string, unknown>, key: string): boolean => {
  let cur: unknown = layer;
  for (const part of key.split('.')) {
    if (!cur || typeof cur !== 'object' || !(part in cur)) return false;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur !== undefined;
};

/**
 * The effective configuration, one line per setting, with the layer it came from: flags win over the environment,
 * the environment over the config file, the file over the defaults (the order `loadConfig` merges them in).
 */
export const effectiveConfig = (
  flags: { config?: string; backend?: string; dataDir?: string },
  env: NodeJS.ProcessEnv,
  cwd: string,
) => {
  const config = loadConfig(flags, env, cwd);
  const file = fromFile(flags.config ?? env.PASSK_CONFIG, cwd);
  const envLayer = fromEnv(env);
  const flagLayer = { backend: flags.backend, dataDir: flags.dataDir };
  const settings: Setting[] = leaves(config).map(([key, value]) => ({
    key,
    value: SECRET.has(key) && value ? '***' : value,
    source: has(flagLayer, key) ? 'flag' : has(envLayer, key) ? 'env' : has(file, key) ? 'file' : 'default',
  }));
  return { file: configFileOf(flags.config ?? env.PASSK_CONFIG, cwd), settings };
};

export const configCommand = (program: Command): void => {
  program
    .command('config')
    .summary('print the effective configuration and where each value came from')
    .description(
      'Prints every setting passk would use here: from a flag (--backend, --data-dir), the environment\n' +
        '(PASSK_*, KAFKA_*, SCHEMA_REGISTRY_URL, CLICKHOUSE_*), the config file (./passk.config.json, --config or\n' +
        'PASSK_CONFIG) or the default, validated as every command validates it. Secrets are masked. See docs/cli.md.',
    )
    .option('--json', 'print {file, settings: [{key, value, source}]} as JSON')
    .addHelpText(
      'after',
      `
Examples:
  passk config
  PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8081 passk config --json

Exit codes: 0 ok, 2 invalid configuration (the setting is named).`,
    )
    .action((flags: { json?: boolean }, cmd: Command) => {
      const result = effectiveConfig(cmd.optsWithGlobals(), process.env, process.cwd());
      if (flags.json) return void process.stdout.write(renderJson(result));
      const show = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));
      process.stdout.write(
        renderTerminal([
          text(`config file: ${result.file ?? 'none'}`, 'dim'),
          table(
            ['setting', 'value', 'from'],
            result.settings.map((s) => [s.key, show(s.value), s.source]),
          ),
        ]),
      );
    });
};
