import type { Command } from 'commander';
import { buildReport, calibrateJudges } from '../../processors/core/index.ts';
import { adaptiveRounds, firstKOf } from './firstStage.ts';
import { readJudgmentFile } from '../../producers/files/index.ts';
import { InputError } from '../../schemas/errors.ts';
import { judgeBlocks, reportBlocks } from '../format/reportDoc.ts';
import { nextCommand, passkCommand, quoteArg, sourceArgs } from '../format/doc.ts';
import { renderJson, renderMarkdown, renderTerminal } from '../format/render.ts';
import {
  addOfflineOptions,
  loadSources,
  outputFormat,
  positiveInt,
  reportOptions,
  type OfflineFlags,
} from './offlineOptions.ts';
import { epilog } from '../format/helpText.ts';

type ReportFlags = OfflineFlags & { agentVersion?: string[]; judgments?: string; allAttempts?: boolean };

export const reportCommand = (program: Command): void => {
  const cmd = program
    .command('report')
    .description(
      'Reads trial files and reports, per suite, dataset version and agent version: rows and attempts per row,\n' +
        'mean accuracy (clustered SE), pass@k and pass^k for k = 1..K (bootstrap over rows), flip rate,\n' +
        'stability classes, output flips and intermediate-check stability. See docs/metrics.md.',
    )
    .argument(
      '[files...]',
      "trial files: flat JSONL, flat CSV (*.csv), public-trials JSONL (detected per line), or other tools' results (τ-bench, τ²-bench, promptfoo, Inspect .json/.eval; detected as `passk import` does); none with --from-store",
    )
    .option('--agent-version <v>', 'only this agent version (repeatable)', (v: string, p: string[] = []) => [...p, v])
    .option('--judgments <file>', 'also calibrate judges: JudgmentRecorded / LabelRecorded JSON lines')
    .option(
      '--include-confirmation',
      'also count attempts of confirmation runs (run_id starting with "confirm"); by default the report describes the planned attempts only',
    )
    .option(
      '--first-stage <k>',
      "adaptive runs: the headline numbers from each row's first k graded attempts (default: the run's --first-k from its rounds on the log with --from-store, else 2)",
      positiveInt('--first-stage'),
    )
    .option(
      '--all-attempts',
      'adaptive runs: pool all attempts for the headline numbers too (biased: the stopping rule gave some rows more)',
    );
  addOfflineOptions(cmd)
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk report examples/public-trials/tau_bench.jsonl
  passk report --from-store --suite refunds            # what passk process put in the store
  passk report --k 8 --json examples/public-trials/*.jsonl
  passk report --ungraded-as-failure --markdown examples/tau-bench-gpt-4o.jsonl > report.md
  passk report --judgments judge-labels.jsonl examples/refunds-v1-v2.jsonl

judge-labels.jsonl is yours: your judges' JudgmentRecorded and humans' LabelRecorded
events, one a line (docs/metrics.md).

JSON: {"groups": [{suite, dataset_version, agent_version, rows, trials, ungraded, mean_accuracy,
  pass_at_k: {"1": …}, pass_hat_k: {"1": …}, rows_at_k, flip_rate, classes, intervals, …}]}
  (plus "judges": […] with --judgments).
Exit codes: 0 ok, 2 bad input (file, line and field named).`),
    )
    .action(async (files: string[], flags: ReportFlags, cmd: Command) => {
      const format = outputFormat(flags);
      const { groups: all, declared } = await loadSources(files, flags, cmd);
      const groups = all.filter((g) => !flags.agentVersion || flags.agentVersion.includes(g.key.agent_version));
      if (groups.length === 0)
        throw new InputError(
          `no trials of agent version ${flags.agentVersion!.join(', ')}; versions in ${flags.fromStore ? 'the store' : 'the files'}: ${[...new Set(all.map((g) => g.key.agent_version))].join(', ')}`,
          { field: '--agent-version' },
        );
      const judgeFile = flags.judgments ? await readJudgmentFile(flags.judgments) : undefined;
      // adaptive runs (run_id adaptive-…, or rounds on the log): headline numbers from the first stage
      const { firstStage, ...options } = reportOptions(flags);
      const base = { ...options, declared };
      const rounds = flags.fromStore && !flags.allAttempts ? await adaptiveRounds(cmd) : new Map<string, number>();
      const report = buildReport(
        groups,
        flags.allAttempts
          ? base
          : {
              ...base,
              headlineFirstStage: firstStage ?? firstKOf(groups, rounds).k,
              adaptiveRuns: [...rounds.keys()],
            },
      );
      const judges = judgeFile ? calibrateJudges(judgeFile.judgments, judgeFile.labels, flags.confidence) : undefined;
      if (format === 'json') process.stdout.write(renderJson(judges ? { ...report, judges } : report));
      else {
        const blocks = [...reportBlocks(report.groups), ...(judges ? judgeBlocks(judges) : [])];
        const versions = [...new Set(report.groups.map((g) => g.agent_version))];
        const next =
          versions.length >= 2
            ? [
                nextCommand(
                  passkCommand(
                    `compare --baseline ${quoteArg(versions[0]!)} --candidate ${quoteArg(versions[1]!)} ${sourceArgs(files, flags)}`,
                  ),
                ),
              ]
            : [];
        process.stdout.write(format === 'markdown' ? renderMarkdown(blocks) : renderTerminal([...blocks, ...next]));
      }
    });
};
