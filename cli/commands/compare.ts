import type { Command } from 'commander';
import { compareVersions, versionPairs, type Group, type VersionPairs } from '../../processors/core/index.ts';
import { InputError } from '../../schemas/errors.ts';
import { compareBlocks, SHOWN_SUSPECTS } from '../format/compareDoc.ts';
import { nextCommand, passkCommand, quoteArg, sourceArgs, text } from '../format/doc.ts';
import { renderJson, renderMarkdown, renderTerminal } from '../format/render.ts';
import {
  addOfflineOptions,
  collect,
  loadSources,
  outputFormat,
  positiveInt,
  reportOptions,
  type OfflineFlags,
} from './offlineOptions.ts';
import { epilog } from '../format/helpText.ts';
import { adaptiveRounds, firstKOf, firstStageSource } from './firstStage.ts';

export type CompareFlags = OfflineFlags & {
  all?: boolean;
  baseline: string;
  candidate: string;
  screenAttempts?: number;
  confirmationRun?: string[];
};

/** Adds the options `compare` and `gate` share: the two versions and how confirmation attempts are told apart. */
export const addCompareOptions = (cmd: Command, required = true): Command => {
  const version = (flag: string, what: string) => (required ? cmd.requiredOption(flag, what) : cmd.option(flag, what));
  version('--baseline <version>', 'agent version running today');
  version('--candidate <version>', 'agent version being evaluated');
  return addOfflineOptions(
    cmd
      .option(
        '--screen-attempts <n>',
        'planned attempts per row; later ones are confirmation attempts (default: the most common count per row)',
        positiveInt('--screen-attempts'),
      )
      .option(
        '--confirmation-run <run_id>',
        'a run of confirmation attempts (repeatable); run ids starting with "confirm" always are',
        collect,
      ),
  );
};

export const compareOptions = (f: CompareFlags) => ({
  ...reportOptions(f),
  ...(f.screenAttempts === undefined ? {} : { screenAttempts: f.screenAttempts }),
  confirmationRuns: f.confirmationRun ?? [],
});

/** Pairs the two versions by suite and dataset version; a version absent from every file is an input error. */
/** A version compared with itself has nothing to show: refused before anything is read, with the reason. */
export const refuseSameVersion = (f: { baseline?: string; candidate?: string }): void => {
  if (f.baseline !== undefined && f.baseline === f.candidate)
    throw new InputError(
      `--baseline and --candidate are both ${f.baseline}: a version compared with itself has no change to show (its rows would pair with themselves); name the version it replaces as --baseline`,
      { field: '--candidate' },
    );
};

export const pairVersions = (groups: readonly Group[], f: CompareFlags): VersionPairs => {
  refuseSameVersion(f);
  const pairs = versionPairs(groups, f.baseline, f.candidate);
  for (const [flag, v] of [
    ['--baseline', f.baseline],
    ['--candidate', f.candidate],
  ] as const)
    if (!pairs.versions.includes(v))
      throw new InputError(
        `${flag} ${v}: no trials of this agent version; versions in ${f.fromStore ? 'the store' : 'the files'}: ${pairs.versions.join(', ')}`,
        { field: flag },
      );
  return pairs;
};

export const compareCommand = (program: Command): void => {
  const cmd = program
    .command('compare')
    .description(
      'Compares a candidate with the baseline on the same rows (same suite and dataset version): class transitions,\n' +
        'rows that became stable-correct and rows that stopped being stable-correct, paired bootstrap intervals for\n' +
        'Δpass@1 and Δpass^k, an exact McNemar test, and confirmation of suspected regressions with the extra\n' +
        'attempts in the files (first divergent intermediate check for each confirmed one). See docs/metrics.md.',
    )
    .argument(
      '[files...]',
      "trial files with both versions: flat JSONL, flat CSV (*.csv), public-trials JSONL, or other tools' results (as passk report reads them)",
    );
  addCompareOptions(cmd)
    .option('--all', `list every suspected regression (default: the first ${SHOWN_SUSPECTS}, confirmed ones first)`)
    .option(
      '--first-stage <k>',
      "adaptive runs: the headline numbers and paired Δ from each row's first k graded attempts (default: the run's --first-k from its rounds on the log with --from-store, else 2)",
      positiveInt('--first-stage'),
    )
    .addHelpText(
      'after',
      epilog(`
Confirmation attempts: runs whose run_id starts with "confirm" (or given by --confirmation-run), and attempts
beyond the first --screen-attempts of a row. Screening classes use the rest; confirmation reclassifies with all.

Examples:
  passk compare --baseline v1 --candidate v2 examples/refunds-v1-v2.jsonl
  passk compare --baseline v1 --candidate v2 --from-store --suite refunds
  passk compare --baseline v1 --candidate v2 --confirmation-run rerun-17 trials.jsonl confirm.jsonl
  passk compare --baseline v1 --candidate v2 --json examples/refunds-v1-v2.jsonl | jq '.comparisons[].lost_stable_correct'

trials.jsonl and confirm.jsonl are yours: both versions' trials, and a later run of
the suspects whose run id (rerun-17) does not start with "confirm".

Exit codes: 0 ok (a regression is reported, not an error; use npx passk gate to fail on one), 2 bad input (file, line
  and field named, or no row both versions ran).`),
    )
    .action(async (files: string[], flags: CompareFlags, cmd: Command) => {
      const format = outputFormat(flags);
      refuseSameVersion(flags);
      const { groups, declared } = await loadSources(files, flags, cmd);
      const pairs = pairVersions(groups, flags);
      if (pairs.both.length === 0)
        throw new InputError(
          `no suite and dataset version has trials of both ${flags.baseline} and ${flags.candidate}`,
        );
      // a version with an adaptive run (run id adaptive-…, or rounds on the log): headline numbers from its first
      // stage, whose k is the run's --first-k where its rounds can be read (the log, with --from-store)
      const rounds = flags.fromStore ? await adaptiveRounds(cmd) : new Map<string, number>();
      const found = firstKOf(
        groups.filter((g) => [flags.baseline, flags.candidate].includes(g.key.agent_version)),
        rounds,
      );
      const { firstStage, ...options } = compareOptions(flags);
      const stage = { headlineFirstStage: firstStage ?? found.k, adaptiveRuns: [...rounds.keys()] };
      const comparisons = pairs.both.map((p) => compareVersions(p, { ...options, ...stage, declared }));
      const stageFrom = firstStageSource(firstStage, found);
      const unpaired = pairs.oneSided.map((p) => ({
        suite: p.suite,
        dataset_version: p.dataset_version,
        only: p.baseline.rows.size > 0 ? flags.baseline : flags.candidate,
      }));
      if (format === 'json')
        return void process.stdout.write(
          renderJson({ baseline: flags.baseline, candidate: flags.candidate, comparisons, unpaired }),
        );
      const blocks = [
        ...comparisons.flatMap((c) => compareBlocks(c, { all: flags.all, stageFrom })),
        ...unpaired.map((u) =>
          text(`Not compared: ${u.suite} (${u.dataset_version}) has trials of ${u.only} only.`, 'warn'),
        ),
      ];
      const next = nextCommand(
        passkCommand(
          `gate --baseline ${quoteArg(flags.baseline)} --candidate ${quoteArg(flags.candidate)} ${sourceArgs(files, flags)}`,
        ),
      );
      process.stdout.write(format === 'markdown' ? renderMarkdown(blocks) : renderTerminal([...blocks, next]));
    });
};
