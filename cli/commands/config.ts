import type { Command } from 'commander';
import { effectiveConfig } from '../../deploy/config.ts';
import { table, text } from '../format/doc.ts';
import { renderJson, renderTerminal } from '../format/render.ts';
import { epilog } from '../format/helpText.ts';

export const configCommand = (program: Command): void => {
  program
    .command('config')
    .description(
      'Prints every setting passk would use here: from a flag (--backend, --data-dir), the environment\n' +
        '(PASSK_*, KAFKA_*, SCHEMA_REGISTRY_URL, CLICKHOUSE_*), the config file (./passk.config.json, --config or\n' +
        'PASSK_CONFIG) or the default, validated as every command validates it. Secrets are masked. See docs/cli.md.',
    )
    .option('--json', 'print {file, settings: [{key, value, source}]} as JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk config
  PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8081 passk config --json

Exit codes: 0 ok, 2 invalid configuration (the setting is named).`),
    )
    .action((flags: { json?: boolean }, cmd: Command) => {
      const result = effectiveConfig(cmd.optsWithGlobals());
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
