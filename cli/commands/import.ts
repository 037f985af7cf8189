import cliProgress from 'cli-progress';
import { type Command, InvalidArgumentError } from 'commander';
import { FORMATS, type Format } from '../../producers/importers/detect.ts';
import { type FileReport, importFiles } from '../../producers/importers/importFiles.ts';
import { type Block, heading, table, text } from '../format/doc.ts';
import { foldedNext } from '../format/storeHeld.ts';
import { curve, num, pct } from '../format/numbers.ts';
import { progressBarSize, renderJson, renderTerminal } from '../format/render.ts';
import { configOf, exitOnUnavailable, withEventLog } from '../context.ts';
import { epilog } from '../format/helpText.ts';

const formatArg = (v: string): Format => {
  if (!(FORMATS as readonly string[]).includes(v)) throw new InvalidArgumentError(`one of ${FORMATS.join(', ')}`);
  return v as Format;
};

const threshold = (v: string): number => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`a number, got "${v}"`);
  return n;
};

type ImportFlags = {
  format?: Format;
  suite?: string;
  agentVersion?: string;
  datasetId?: string;
  datasetVersion?: string;
  runId?: string;
  scorer?: string;
  passThreshold?: number;
  allowUnknownFields?: boolean;
  check: boolean;
  json?: boolean;
};

const render = (reports: readonly FileReport[], next: Block): string =>
  renderTerminal([
    ...reports.flatMap((r) => [
      heading(`${r.file} (${r.format})`, 2),
      text(
        `${r.trials} trials read${r.repeated ? ` (${r.repeated} repeated entries counted once)` : ''}; ${r.published} events published, ${r.skipped} already recorded`,
      ),
      table(
        ['suite', 'agent version', 'rows', 'trials', 'passed', 'failed', 'ungraded', 'mean score', 'pass^1..k'],
        r.summary.map((s) => [
          s.suite,
          s.agentVersion,
          String(s.rows),
          String(s.trials),
          String(s.passed),
          String(s.failed),
          String(s.ungraded),
          num(s.meanScore, 3),
          curve(s.passHat.map((x) => pct(x))),
        ]),
      ),
      ...r.summary.flatMap((s) => {
        const graded = s.rowsAtK[0] ?? 0;
        const partial = s.rowsAtK.flatMap((n, i) => (n < graded ? [`k = ${i + 1}: ${n} of ${graded} rows`] : []));
        const missing = s.rowsAtK.length < s.attempts ? `no row has ${s.rowsAtK.length + 1} graded attempts` : '';
        const short =
          s.short > 0 && s.declared !== undefined
            ? [
                text(
                  `${s.agentVersion}: ${s.short} of ${s.rows} rows have fewer attempts in the file than the ${s.declared} per row it declares; K is ${s.attempts}`,
                ),
              ]
            : [];
        if (partial.length === 0 && !missing) return short;
        return [
          text(
            `${s.agentVersion}: each row was given ${s.attempts} attempts, some left ungraded or missing; pass^k averages the rows with k graded ones (${[...partial, missing].filter(Boolean).join('; ')})`,
          ),
          ...short,
        ];
      }),
    ]),
    next,
  ]);

export const importCommand = (program: Command): void => {
  program
    .command('import')
    .description(
      'Reads result files and publishes one TrialRecorded per trial, plus one RunFinished per run and agent,\n' +
        'to the configured backend (the embedded log in ./.passk by default). Event ids are derived from each\n' +
        "trial's identity, and events the log already holds are skipped: importing a file twice records nothing new.\n" +
        'Every file is read and checked before anything is sent. See docs/producers.md for each mapping.',
    )
    .argument('<files...>', 'result files; the format is detected from the extension and the JSON shape')
    .option('--format <format>', `force the format: ${FORMATS.join(', ')}`, formatArg)
    .option('--suite <name>', 'suite (default: from the file: domain, task or config description)')
    .option(
      '--agent-version <v>',
      'agent version (default: from the file: model, provider label; τ-bench: the file name)',
    )
    .option('--dataset-id <id>', 'dataset id')
    .option(
      '--dataset-version <v>',
      'dataset version (default: τ²: the git commit; others: a hash of the task definitions)',
    )
    .option('--run-id <id>', "run id (default: the tool's run/eval id, else a hash of the file)")
    .option('--scorer <name>', 'Inspect: the scorer that decides pass/fail (default: the first)')
    .option(
      '--pass-threshold <x>',
      "Inspect: a score at least this passes (C = 1, P = 0.5, I = 0; default 1, Inspect's rule: partial credit fails)",
      threshold,
    )
    .option(
      '--allow-unknown-fields',
      'flat JSONL/CSV: ignore fields passk does not define (default: an error with the closest known field)',
    )
    .option('--no-check', 'do not read the log to skip events it already holds (ids stay deterministic)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk import examples/tool-outputs/tau2-grok-4-airline-4trials.json --agent-version grok-4
  passk import examples/tool-outputs/promptfoo-repeat3-results.json logs/*.json
  passk --data-dir /tmp/passk import examples/refunds-v1-v2.jsonl

logs/*.json stands for your Inspect logs (.json or .eval files).

Importing a file twice records nothing new (event ids come from the trial identity).
Files of any size are streamed, other tools' JSON and .eval logs included
(one .eval entry may unpack to 1/16 of the heap). Progress bars show the files
read and checked, then the trials published.
Exit codes: 0 ok, 2 bad input (file, line and field named), 3 the event log is unreachable.`),
    )
    .action(async (files: string[], flags: ImportFlags, cmd: Command) => {
      const opts = {
        ...(flags.format ? { format: flags.format } : {}),
        ...(flags.suite ? { suite: flags.suite } : {}),
        ...(flags.agentVersion ? { agentVersion: flags.agentVersion } : {}),
        ...(flags.datasetId ? { datasetId: flags.datasetId } : {}),
        ...(flags.datasetVersion ? { datasetVersion: flags.datasetVersion } : {}),
        ...(flags.runId ? { runId: flags.runId } : {}),
        ...(flags.scorer ? { scorer: flags.scorer } : {}),
        ...(flags.passThreshold !== undefined ? { passThreshold: flags.passThreshold } : {}),
        ...(flags.allowUnknownFields ? { allowUnknownFields: true } : {}),
      };
      const config = configOf(cmd);
      const bar = process.stderr.isTTY
        ? new cliProgress.SingleBar(
            {
              format: ' {bar} {value}/{total} trials | ETA {eta_formatted} ',
              barsize: progressBarSize(36),
              hideCursor: true,
              stream: process.stderr,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      // the passes that read and check the files come first (a 215 MB τ-bench file: a few seconds each), then the
      // publishing one: a bar each
      const readingBar = process.stderr.isTTY
        ? new cliProgress.SingleBar(
            {
              format: ' {bar} {percentage}% read and checked | ETA {eta_formatted} ',
              barsize: progressBarSize(36),
              hideCursor: true,
              stream: process.stderr,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      let reading = false;
      const onReading = (done: number, total: number) => {
        if (!readingBar || total === 0) return;
        if (!reading) readingBar.start(total, 0);
        reading = true;
        readingBar.setTotal(total);
        readingBar.update(done);
      };
      let started = false;
      const onProgress = (done: number, total: number) => {
        if (!bar) return;
        if (reading) readingBar?.stop();
        reading = false;
        if (!started) bar.start(total, 0);
        started = true;
        bar.update(done);
      };
      const reports = await withEventLog(
        cmd,
        (log) =>
          importFiles(files, opts, {
            publisher: log.publisher,
            maxEventBytes: config.maxEventBytes,
            onProgress,
            onReading,
            ...(flags.check ? { source: log } : {}),
          }),
        config,
      )
        .finally(() => {
          if (reading) readingBar?.stop();
          if (started) bar?.stop();
        })
        .catch(exitOnUnavailable);
      process.stdout.write(flags.json ? renderJson({ files: reports }) : render(reports, foldedNext(config)));
    });
};
