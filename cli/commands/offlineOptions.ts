import { InvalidArgumentError, type Command } from 'commander';
import {
  DEFAULT_BOOTSTRAP,
  DEFAULT_MIN_ATTEMPTS,
  groupTrials,
  type Group,
  type ReportOptions,
} from '../../processors/core/index.ts';
import { readTrialFiles } from '../../producers/files/index.ts';
import { InputError } from '../../schemas/errors.ts';

/** Options shared by `report`, `compare` and `gate`, which read trial files offline. */
export type OfflineFlags = {
  k?: number;
  minAttempts: number;
  ungradedAsFailure?: boolean;
  suite?: string[];
  seed: number;
  bootstrap: number;
  confidence: number;
  json?: boolean;
  markdown?: boolean;
  includeConfirmation?: boolean;
  allowUnknownFields?: boolean;
};

export const positiveInt =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer, got "${v}"`);
    return n;
  };
const nonNegativeInt = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff)
    throw new InvalidArgumentError(`seed must be an integer in [0, 2^32), got "${v}"`);
  return n;
};
export const fraction =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 1)
      throw new InvalidArgumentError(`${name} must be a number in [0, 1], got "${v}"`);
    return n;
  };
const openFraction = (v: string): number => {
  const n = fraction('confidence')(v);
  if (n <= 0 || n >= 1) throw new InvalidArgumentError(`confidence must be strictly between 0 and 1, got "${v}"`);
  return n;
};
export const collect = (v: string, prior: string[] = []): string[] => [...prior, v];

export const addOfflineOptions = (cmd: Command): Command =>
  cmd
    .option(
      '--k <K>',
      'report pass@k and pass^k for k = 1..K; a row with fewer than k graded attempts is left out at that k (default: the fewest graded attempts of any row)',
      positiveInt('--k'),
    )
    .option(
      '--min-attempts <n>',
      'graded attempts a row needs to get a stability class',
      positiveInt('--min-attempts'),
      DEFAULT_MIN_ATTEMPTS,
    )
    .option('--ungraded-as-failure', 'count ungraded trials (passed: null) as failures instead of leaving them out')
    .option('--suite <name>', 'only this suite (repeatable)', collect)
    .option('--seed <n>', 'seed of the bootstrap resampling', nonNegativeInt, DEFAULT_BOOTSTRAP.seed)
    .option('--bootstrap <reps>', 'bootstrap resamples', positiveInt('--bootstrap'), DEFAULT_BOOTSTRAP.reps)
    .option('--confidence <c>', 'confidence level of every interval', openFraction, DEFAULT_BOOTSTRAP.confidence)
    .option('--allow-unknown-fields', 'ignore fields a trial file has that passk does not define (default: an error)')
    .option('--json', 'print JSON')
    .option('--markdown', 'print Markdown');

export const reportOptions = (f: OfflineFlags): ReportOptions => ({
  ...(f.k === undefined ? {} : { k: f.k }),
  minAttempts: f.minAttempts,
  ungradedAsFailure: f.ungradedAsFailure === true,
  includeConfirmation: f.includeConfirmation === true,
  bootstrap: { reps: f.bootstrap, seed: f.seed, confidence: f.confidence },
});

export type OutputFormat = 'table' | 'json' | 'markdown';
export const outputFormat = (f: OfflineFlags): OutputFormat => {
  if (f.json && f.markdown) throw new InputError('choose one of --json and --markdown');
  return f.json ? 'json' : f.markdown ? 'markdown' : 'table';
};

/** Reads every file (all or nothing), tells stderr about repeated lines, and folds the trials into groups. */
export const loadGroups = async (files: readonly string[], f: OfflineFlags): Promise<Group[]> => {
  const { trials, files: read } = await readTrialFiles(files, { allowUnknownFields: f.allowUnknownFields === true });
  for (const r of read)
    if (r.duplicates > 0)
      process.stderr.write(
        `passk: ${r.file}: ${r.duplicates} lines repeat attempts already read (same event id and content); each counted once\n`,
      );
  const groups = groupTrials(trials);
  const wanted = f.suite ? groups.filter((g) => f.suite!.includes(g.key.suite)) : groups;
  if (wanted.length === 0)
    throw new InputError(
      `no trials for suite ${f.suite!.join(', ')}; suites in the files: ${[...new Set(groups.map((g) => g.key.suite))].join(', ')}`,
    );
  return wanted;
};
