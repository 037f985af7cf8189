import { InvalidArgumentError, type Command } from 'commander';
import { openEventLog } from '../../deploy/eventLog.ts';
import { describeDrift, storeDrift, type StoreDrift } from '../../deploy/drift.ts';
import { storeTarget } from '../../deploy/store.ts';
import { InputError } from '../../schemas/errors.ts';
import {
  checkConsistency,
  type ConsistencyReport,
  type RowDifference,
  type VersionCheck,
  type VersionNumbers,
} from '../../sinks/clickhouse/consistency.ts';
import { deadLetters, type DeadLetterSummary } from '../../sinks/clickhouse/queries/deadLetters.ts';
import { heading, list, passkCommand, table, text, type Block, type Cell } from '../format/doc.ts';
import { pct } from '../format/numbers.ts';
import { renderJson, renderTerminal } from '../format/render.ts';
import { EXIT } from '../exitCodes.ts';
import { epilog } from '../format/helpText.ts';
import { withReader } from '../context.ts';

type CheckFlags = { suite?: string; summaries: boolean; json?: boolean };

const suiteName = (v: string): string => {
  if (v.trim() === '') throw new InvalidArgumentError('--suite needs a suite name');
  return v;
};

const SOURCES = ['from_trials', 'from_row_state', 'from_summaries'] as const;

/** One number of a version as the sources give it: once when they agree, else each source's value. */
const compared = (
  v: VersionCheck,
  sources: readonly (typeof SOURCES)[number][],
  pick: (x: Exclude<VersionNumbers, { invalid: unknown }>) => string,
): Cell => {
  const values = sources.map((s) => {
    const x = v[s];
    return x === null || x === undefined ? 'missing' : 'invalid' in x ? 'invalid' : pick(x);
  });
  if (values.every((x) => x === values[0])) return values[0]!;
  return { text: values.join(' / '), tone: 'bad' };
};

const rowLine = (d: RowDifference): string => {
  const where = `${d.suite} · ${d.dataset_version} · ${d.agent_version} · ${d.row_id}`;
  if (d.in_trials !== 1)
    return `${where}: in row_state only (n ${d.state_n}, c ${d.state_c}, ungraded ${d.state_ungraded})`;
  if (d.in_row_state !== 1)
    return `${where}: in trials only (n ${d.trials_n}, c ${d.trials_c}, ungraded ${d.trials_ungraded})`;
  const counts = `trials n ${d.trials_n}, c ${d.trials_c}, ungraded ${d.trials_ungraded}; row_state n ${d.state_n}, c ${d.state_c}, ungraded ${d.state_ungraded}`;
  return `${where}: ${counts}${d.same_attempts === 1 ? '' : '; attempt ids differ'}`;
};

/**
 * The report as blocks: one table row per version, then the rows that differ. The numbers count every graded attempt,
 * confirmation runs' included (the three sources hold them all), so they are labelled as such: `report --from-store`,
 * `compare` and the dashboard leave confirmation runs out of their headline numbers (`isConfirmationRun`).
 */
export const reportBlocks = (r: ConsistencyReport, where: string): Block[] => {
  const sources = r.summaries ? SOURCES : SOURCES.slice(0, 2);
  const names = r.summaries ? 'trials / row_state / version_summaries' : 'trials / row_state';
  const blocks: Block[] = [heading(`Consistency of ${where}: ${names}`)];
  if (r.checked.length === 0)
    return [...blocks, text('nothing to check: the store holds no trials, row states or summaries', 'dim')];
  blocks.push(
    table(
      [
        'suite',
        'dataset version',
        'agent version',
        'rows',
        'graded attempts, all runs',
        'passes',
        'ungraded',
        'accuracy, all attempts',
        'status',
      ],
      r.checked.map((v) => [
        v.suite,
        v.dataset_version,
        v.agent_version,
        compared(v, sources, (x) => String(x.rows + x.rows_without_graded)),
        compared(v, sources, (x) => String(x.trials)),
        compared(v, sources, (x) => String(x.passes)),
        compared(v, sources, (x) => String(x.ungraded)),
        compared(v, sources, (x) => pct(x.mean_accuracy)),
        v.ok ? { text: 'consistent', tone: 'good' } : { text: 'differs', tone: 'bad' },
      ]),
    ),
  );
  blocks.push(
    text(
      'these count every graded attempt, confirmation runs (confirm-…) included, to compare the sources: ' +
        'report --from-store, compare and the dashboard leave confirmation runs out of their headline numbers',
      'dim',
    ),
  );
  if (r.versions.some((v) => !v.ok)) blocks.push(text(`where the sources differ, cells show ${names}`, 'dim'));
  if (r.differences.length > 0) {
    const shown = r.differences.slice(0, 50).map(rowLine);
    if (r.differences.length > shown.length)
      shown.push(`… and ${r.differences.length - shown.length} more (--json lists them all)`);
    blocks.push(list(`Rows where trials and row_state differ (${r.differences.length})`, shown, 'bad'));
  }
  blocks.push(
    r.ok
      ? text(`consistent: ${r.rows} rows in ${r.checked.length} versions`, 'good')
      : text(
          `NOT consistent: ${r.differences.length} of ${r.rows} rows and ${r.versions.length} of ${r.checked.length} versions differ`,
          'bad',
        ),
  );
  return blocks;
};

/** The store against the log: what the processors committed that the store lacks, or a lost part. */
const driftBlocks = (d: StoreDrift, whole: boolean): Block[] =>
  whole
    ? [heading('Store and log', 2), text('the store holds everything the processors committed from the log', 'good')]
    : [
        heading('Store and log', 2, 'bad'),
        list('The store lacks what the log holds', describeDrift(d), 'bad'),
        text(
          `mend it: ${passkCommand('rebuild')} (or restart passk process, which rebuilds the store at start)`,
          'bad',
        ),
      ];

const SHOWN_LETTERS = 10;

/** What each stage's letters are, as the summary line says. */
const STAGES: Record<string, string> = {
  decode: 'log records not decoded or valid',
  conflict: 'trials conflicting with an attempt already recorded',
  ingest: 'spans or log records passk ingest refused or evicted',
  sink: 'rows the store refused',
};

/** Where a letter came from: a table, an ingest path, or a log position. */
const sourceOf = (l: DeadLetterSummary['letters'][number]): string =>
  l.stage === 'sink'
    ? `table ${l.target_table}`
    : l.stage === 'ingest'
      ? l.source_topic
      : `${l.source_topic} ${l.source_partition}/${l.source_offset}`;

/** The store's dead letters: how many of each stage, and the newest with where they came from and why. */
const deadLetterBlocks = (d: DeadLetterSummary): Block[] => {
  if (d.total === 0)
    return [heading('Dead letters', 2), text('none: every record was a valid event and stored', 'good')];
  const stages = Object.entries(d.by_stage)
    .map(([stage, n]) => `${n} ${STAGES[stage] ?? 'rows the store refused'}`)
    .join(', ');
  const blocks: Block[] = [
    heading(`Dead letters (${d.total})`, 2, 'warn'),
    text(`${stages}; kept with their bytes and reason, once each`, 'warn'),
    table(
      ['source', 'reason', 'bytes'],
      d.letters.slice(0, SHOWN_LETTERS).map((l) => [sourceOf(l), l.reason, l.preview]),
    ),
  ];
  if (d.total > SHOWN_LETTERS)
    blocks.push(text(`… and ${d.total - SHOWN_LETTERS} more (--json lists up to 1000)`, 'dim'));
  return blocks;
};

export const checkCommand = (program: Command): void => {
  program
    .command('check')
    .description(
      "Recomputes in SQL, from the raw trials, each row's graded attempts, passes and ungraded\n" +
        "attempts, and compares them with the processors' row state; then compares each version's\n" +
        'numbers (mean accuracy, pass@k, pass^k, flip rate, classes, ungraded) from the trials, the\n' +
        'row state and the version summaries. Then compares the store with the event log: every position\n' +
        "the processors committed must be in the store's ledger (store_positions), and the trials, row\n" +
        'states and version summaries must hold as many attempts; if not, it says how to mend it (passk\n' +
        'rebuild). Then lists the dead letters: log records the processors\n' +
        'could not decode or validate, spans and log records passk ingest refused or evicted, and\n' +
        'rows the store refused, each with its reason and bytes.\n' +
        'Runs on the configured store: embedded chDB in <data-dir>/store, or the server of\n' +
        'CLICKHOUSE_URL. See docs/store.md.',
    )
    .option('--suite <name>', 'only this suite', suiteName)
    .option('--no-summaries', 'leave version_summaries out (a store written before the processors kept them)')
    .option('--json', 'print the whole report as JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk check
  passk check --suite airline --json
  passk --data-dir ./.passk check --no-summaries

JSON: {store, database, rows, differences: [...], checked: [{suite, dataset_version, agent_version,
  from_trials, from_row_state, from_summaries, ok}], versions: [the checked entries that differ], summaries, ok,
  log: {behind: [{projection, topic, partition, committed, stored}], totals: {trials, folded, summarized},
  damaged, known, ok, mend}, dead_letters: {total, by_stage, letters: [{id, stage, source_topic,
  source_partition, source_offset, target_table, reason, bytes, preview}]}}.

Dead letters are listed; they do not change the exit code.
Exit codes: 0 consistent, 1 not consistent, 2 bad input (a flag, or a suite the store does not hold),
3 the store or the event log is unreachable, or the store is held by another passk process. Not
consistent includes a store that lacks what the log holds (passk rebuild mends it).`),
    )
    .action(async (flags: CheckFlags, cmd: Command) => {
      await withReader(cmd, async (reader, config) => {
        const target = storeTarget(config);
        const report = await checkConsistency(reader, {
          ...(flags.suite ? { suite: flags.suite } : {}),
          summaries: flags.summaries,
        });
        if (flags.suite && report.checked.length === 0)
          throw new InputError(`the store holds no trials, row states or summaries of suite "${flags.suite}"`, {
            field: '--suite',
          });
        const where = target.kind === 'embedded' ? target.path : target.url;
        const dead = await deadLetters(reader, { limit: flags.json ? 1000 : SHOWN_LETTERS });
        const log = await openEventLog(config);
        const drift = await storeDrift(log, reader).finally(() => log.close());
        const whole = drift.behind.length === 0 && !(drift.damaged && !drift.known);
        process.stdout.write(
          flags.json
            ? renderJson({
                store: where,
                database: config.clickhouse.database,
                ...report,
                ok: report.ok && whole,
                log: {
                  behind: drift.behind,
                  totals: drift.totals,
                  damaged: drift.damaged,
                  known: drift.known,
                  ok: whole,
                  mend: whole ? null : passkCommand('rebuild'),
                },
                dead_letters: dead,
              })
            : renderTerminal([...reportBlocks(report, where), ...driftBlocks(drift, whole), ...deadLetterBlocks(dead)]),
        );
        process.exitCode = report.ok && whole ? EXIT.ok : EXIT.failed;
      });
    });
};
