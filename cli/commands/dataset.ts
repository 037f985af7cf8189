import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InputError } from '../../schemas/errors.ts';
import { planPublish, publishPlan, readDatasets, versionChanges } from '../../producers/datasets/index.ts';
import { readDataset } from '../../producers/runner/dataset.ts';
import { datasetRows, datasetVersions } from '../../sinks/clickhouse/index.ts';
import { heading, nextCommand, passkCommand, quoteArg, table, text } from '../format/doc.ts';
import { renderJson, renderTerminal, writeStderr } from '../format/render.ts';
import { datasetIds } from '../../web/queries.ts';
import { epilog } from '../format/helpText.ts';
import { exitOnUnavailable, withEventLog, withReader } from '../context.ts';

const list = (ids: readonly string[], max = 8): string =>
  ids.length === 0 ? '—' : ids.slice(0, max).join(', ') + (ids.length > max ? ` … (${ids.length} in all)` : '');

/** A version by its id, or by its number N (1 = the oldest). */
const pickVersion = (versions: readonly { dataset_version: string }[], wanted: string, datasetId: string): string => {
  if (versions.some((v) => v.dataset_version === wanted)) return wanted;
  if (wanted === 'latest' && versions.length > 0) return versions.at(-1)!.dataset_version;
  const n = Number(wanted);
  if (Number.isInteger(n) && n >= 1 && n <= versions.length) return versions[n - 1]!.dataset_version;
  throw new InputError(
    `dataset ${datasetId} has no version "${wanted}" (versions: ${versions.map((v, i) => `${i + 1}=${v.dataset_version}`).join(', ')}); pass one of them, or --version latest`,
    { field: 'version' },
  );
};

/** The version `wanted` names among `versions`, or undefined where pickVersion would refuse it. */
const pickedOrNot = (versions: readonly { dataset_version: string }[], wanted: string): string | undefined => {
  try {
    return pickVersion(versions, wanted, '');
  } catch {
    return undefined;
  }
};

/**
 * A version the log holds and the store does not yet (published or grown by `review --confirm` since the last fold):
 * exported from the store, `latest` was the version before it, and `dataset versions` (the log's) disagreed.
 */
const notStoredYet = (id: string, version: string, stored: readonly { dataset_version: string }[]): InputError =>
  new InputError(
    `dataset ${id} version ${version} is on the event log but not in the store yet (the store holds ${stored.length ? list(stored.map((v) => v.dataset_version)) : 'no version of it'}): fold it, or wait for the running passk process or serve, then export again: ${passkCommand('process --until-caught-up')}`,
    { field: '--version' },
  );

/** An unknown dataset id, with the ids there are and how to make the one asked for. */
const unknownDataset = (id: string, known: readonly string[], where: string): InputError =>
  new InputError(
    `no dataset "${id}" ${where} (${known.length ? `datasets there: ${list(known)}` : 'none there yet'}); check --dataset, or publish it: ${passkCommand(`dataset publish FILE --dataset ${quoteArg(id)}`)}`,
    { field: '--dataset' },
  );

export const datasetCommand = (program: Command): void => {
  const dataset = program
    .command('dataset')
    .description(
      'Dataset versions. publish records a rows file (the format passk run --dataset reads) as a new version, ' +
        'added, changed and removed rows only; versions lists what each version added, changed and removed; ' +
        'export writes one version as JSON lines.',
    )
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk dataset publish examples/refund-agent/refunds.jsonl --dataset refunds
  passk dataset versions --dataset refunds
  passk dataset export --dataset refunds --version 2 --out refunds-v2.jsonl
  passk dataset export --dataset refunds --version latest --must-not-break-only

Exit codes: 0 ok, 2 bad input (an unknown dataset or version), 3 the store is unreachable or held by another process.`),
    );
  dataset
    .command('publish')
    .summary(
      'publish a rows file (the format passk run --dataset reads) as a new dataset version: rows added, changed and removed',
    )
    .argument('<file>', 'rows as JSON lines: {"id", "input", "expected"?, "tags"?, "expected_checks"?}')
    .option('--dataset <id>', 'dataset id (default: the file name, as passk run uses)')
    .option('--version <v>', 'the new version id (default: a hash of the file, the version passk run pins)')
    .option(
      '--remove <row-id...>',
      'also remove these rows that confirmed production failures added (pf-…); a file that lacks them keeps them',
    )
    .option('--json', 'print JSON')
    .action(
      async (
        file: string,
        flags: { dataset?: string; version?: string; remove?: string[]; json?: boolean },
        cmd: Command,
      ) => {
        const rows = await readDataset(file);
        const datasetId = flags.dataset ?? rows.name;
        const plan = await withEventLog(cmd, async (log) => {
          const state = (await readDatasets(log)).get(datasetId);
          const p = planPublish(state, rows, {
            datasetId,
            ...(flags.version ? { version: flags.version } : {}),
            ...(flags.remove
              ? { removeFromProduction: flags.remove.flatMap((r) => r.split(',')).filter(Boolean) }
              : {}),
            now: Date.now(),
          });
          await publishPlan(log.publisher, p);
          return p;
        }).catch(exitOnUnavailable);
        const summary = {
          dataset_id: plan.datasetId,
          dataset_version: plan.version,
          published: plan.events.length,
          added: plan.added,
          changed: plan.changed,
          removed: plan.removed,
          kept_from_production: plan.keptFromProduction,
        };
        if (flags.json) return void process.stdout.write(renderJson(summary));
        process.stdout.write(
          renderTerminal(
            plan.unchangedAs
              ? [text(`dataset ${datasetId}: the file is version ${plan.unchangedAs} already; nothing published`)]
              : [
                  heading(
                    `dataset ${datasetId} version ${plan.version}: ${plan.events.length} row changes published`,
                    1,
                    'good',
                  ),
                  text(`added ${plan.added.length}: ${list(plan.added)}`),
                  text(`changed ${plan.changed.length}: ${list(plan.changed)}`),
                  text(`removed ${plan.removed.length}: ${list(plan.removed)}`),
                  ...(plan.keptFromProduction.length
                    ? [
                        text(
                          `not in the file, kept (from confirmed production failures; --remove ID drops one): ${list(plan.keptFromProduction)}`,
                          'warn',
                        ),
                      ]
                    : []),
                  nextCommand(
                    passkCommand(`run --dataset ${quoteArg(file)} --agent '<agent>'`),
                    `it pins ${datasetId} ${plan.version}`,
                  ),
                ],
          ),
        );
      },
    );
  dataset
    .command('versions')
    .summary('the versions of a dataset, oldest first: rows added, changed and removed in each')
    .requiredOption('--dataset <id>', 'dataset id')
    .option('--json', 'print JSON')
    .action(async (flags: { dataset: string; json?: boolean }, cmd: Command) => {
      const all = await withEventLog(cmd, readDatasets).catch(exitOnUnavailable);
      const state = all.get(flags.dataset);
      if (!state) throw unknownDataset(flags.dataset, [...all.keys()].sort(), 'on the event log');
      const versions = versionChanges(state);
      if (flags.json) return void process.stdout.write(renderJson({ dataset_id: flags.dataset, versions }));
      process.stdout.write(
        renderTerminal([
          heading(`dataset ${flags.dataset}`),
          table(
            ['#', 'version', 'added', 'changed', 'removed', 'rows', 'must-not-break', 'from production'],
            versions.map((v, i) => [
              String(i + 1),
              v.dataset_version,
              `${v.added.length}${v.added.length ? ` (${list(v.added, 4)})` : ''}`,
              `${v.changed.length}${v.changed.length ? ` (${list(v.changed, 4)})` : ''}`,
              `${v.removed.length}${v.removed.length ? ` (${list(v.removed, 4)})` : ''}`,
              String(v.rows),
              String(v.must_not_break_rows),
              String(v.from_production),
            ]),
          ),
          nextCommand(
            passkCommand(`dataset export --dataset ${quoteArg(flags.dataset)} --version latest --out rows.jsonl`),
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
        // the versions on the log (what `dataset versions` lists): the store may not have folded the newest yet
        const onLog = (await withEventLog(cmd, readDatasets).catch(exitOnUnavailable)).get(flags.dataset);
        const logVersions = onLog ? versionChanges(onLog) : [];
        const { version, rows } = await withReader(cmd, async (reader) => {
          const versions = await datasetVersions(reader, { dataset_id: flags.dataset });
          const asked = logVersions.length ? pickedOrNot(logVersions, flags.version) : undefined;
          if (asked !== undefined && !versions.some((v) => v.dataset_version === asked))
            throw notStoredYet(flags.dataset, asked, versions);
          if (versions.length === 0) throw unknownDataset(flags.dataset, await datasetIds(reader), 'in the store');
          const version = pickVersion(versions, flags.version, flags.dataset);
          return {
            version,
            rows: await datasetRows(reader, {
              dataset_id: flags.dataset,
              dataset_version: version,
              mustNotBreakOnly: flags.mustNotBreakOnly === true,
            }),
          };
        });
        // a text that was JSON of an object (or number, array, …) in the published file is that value again
        const value = (r: (typeof rows)[number], f: 'input' | 'expected', text: string): unknown =>
          r.json_fields.includes(f) ? (JSON.parse(text) as unknown) : text;
        const lines = rows.map((r) =>
          JSON.stringify({
            id: r.row_id,
            input: value(r, 'input', r.input),
            ...(r.expected === null ? {} : { expected: value(r, 'expected', r.expected) }),
            tags: r.tags,
            ...(r.expected_checks ? { expected_checks: r.expected_checks } : {}),
            must_not_break: r.must_not_break,
            dataset_id: flags.dataset,
            dataset_version: version,
            changed_in: r.changed_in,
            provenance: Object.fromEntries(Object.entries(r.provenance).filter(([, v]) => v !== null)),
          }),
        );
        const body = lines.length ? `${lines.join('\n')}\n` : '';
        if (flags.out) {
          await writeFile(flags.out, body);
          writeStderr(`passk: wrote ${rows.length} rows of ${flags.dataset} version ${version} to ${flags.out}\n`);
        } else process.stdout.write(body);
      },
    );
};
