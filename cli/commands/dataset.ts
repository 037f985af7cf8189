import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InputError } from '../../schemas/errors.ts';
import { datasetRows, datasetVersions } from '../../sinks/clickhouse/index.ts';
import { heading, table } from '../format/doc.ts';
import { renderJson, renderTerminal } from '../format/render.ts';
import { withStore } from '../store.ts';

/** A version by its id, or by its number N (1 = the oldest). */
const pickVersion = (versions: readonly { dataset_version: string }[], wanted: string, datasetId: string): string => {
  if (versions.some((v) => v.dataset_version === wanted)) return wanted;
  if (wanted === 'latest' && versions.length > 0) return versions.at(-1)!.dataset_version;
  const n = Number(wanted);
  if (Number.isInteger(n) && n >= 1 && n <= versions.length) return versions[n - 1]!.dataset_version;
  throw new InputError(
    `dataset ${datasetId} has no version "${wanted}" (versions: ${versions.map((v, i) => `${i + 1}=${v.dataset_version}`).join(', ') || 'none'})`,
    { field: 'version' },
  );
};

export const datasetCommand = (program: Command): void => {
  const dataset = program
    .command('dataset')
    .summary('dataset versions from the store: list them, export one as JSONL')
    .addHelpText(
      'after',
      `
Examples:
  passk dataset versions --dataset refunds
  passk dataset export --dataset refunds --version 2 --out refunds-v2.jsonl
  passk dataset export --dataset refunds --version latest --must-not-break-only

Exit codes: 0 ok, 2 bad input (an unknown dataset or version), 3 the store is unreachable or held by another process.`,
    );
  dataset
    .command('versions')
    .summary('the versions of a dataset, oldest first')
    .requiredOption('--dataset <id>', 'dataset id')
    .option('--json', 'print JSON')
    .action(async (flags: { dataset: string; json?: boolean }, cmd: Command) => {
      const versions = await withStore(cmd, (s) => datasetVersions(s.client, { dataset_id: flags.dataset }));
      if (flags.json) return void process.stdout.write(renderJson({ versions }));
      process.stdout.write(
        renderTerminal([
          heading(`dataset ${flags.dataset}`),
          table(
            ['#', 'version', 'first seen', 'changed rows', 'rows', 'must-not-break', 'from production'],
            versions.map((v, i) => [
              String(i + 1),
              v.dataset_version,
              new Date(v.first_at).toISOString(),
              String(v.changed_rows),
              String(v.rows),
              String(v.must_not_break_rows),
              String(v.from_production),
            ]),
          ),
        ]),
      );
    });
  dataset
    .command('export')
    .summary('write one dataset version as JSON lines, with tags and provenance (ready for passk run --dataset)')
    .requiredOption('--dataset <id>', 'dataset id')
    .requiredOption('--version <v>', 'the version id, its number N (1 = the oldest), or latest')
    .option('--out <file>', 'write here instead of stdout')
    .option('--must-not-break-only', 'only the must-not-break rows')
    .action(
      async (flags: { dataset: string; version: string; out?: string; mustNotBreakOnly?: boolean }, cmd: Command) => {
        const { version, rows } = await withStore(cmd, async (s) => {
          const version = pickVersion(
            await datasetVersions(s.client, { dataset_id: flags.dataset }),
            flags.version,
            flags.dataset,
          );
          return {
            version,
            rows: await datasetRows(s.client, {
              dataset_id: flags.dataset,
              dataset_version: version,
              mustNotBreakOnly: flags.mustNotBreakOnly === true,
            }),
          };
        });
        const lines = rows.map((r) =>
          JSON.stringify({
            id: r.row_id,
            input: r.input,
            ...(r.expected === null ? {} : { expected: r.expected }),
            tags: r.tags,
            must_not_break: r.must_not_break,
            dataset_version: version,
            changed_in: r.changed_in,
            provenance: Object.fromEntries(Object.entries(r.provenance).filter(([, v]) => v !== null)),
          }),
        );
        const body = lines.length ? `${lines.join('\n')}\n` : '';
        if (flags.out) {
          await writeFile(flags.out, body);
          process.stderr.write(
            `passk: wrote ${rows.length} rows of ${flags.dataset} version ${version} to ${flags.out}\n`,
          );
        } else process.stdout.write(body);
      },
    );
};
