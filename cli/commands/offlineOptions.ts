import { InvalidArgumentError, type Command } from 'commander';
import {
  DEFAULT_BOOTSTRAP,
  DEFAULT_MIN_ATTEMPTS,
  groupTrials,
  type DeclaredRun,
  type Group,
  type ReportOptions,
} from '../../processors/core/index.ts';
import { readTrialFiles } from '../../producers/files/index.ts';
import { InputError } from '../../schemas/errors.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { writeStderr } from '../format/render.ts';
import { PASSK, passkCommand } from '../format/doc.ts';
import { storeTrials, withReader } from '../context.ts';
import { retractedRuns } from '../../sinks/clickhouse/queries/retracted.ts';
import { declaredRuns } from '../../sinks/clickhouse/queries/declaredRuns.ts';
import { readToolResults } from '../../producers/importers/readResultTrials.ts';

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
  firstStage?: number;
  allowUnknownFields?: boolean;
  fromStore?: boolean;
  datasetVersion?: string[];
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
/** 1500, 1500ms, 30s, 2m, 1h */
export const duration = (v: string): number => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`expected a duration like 30s, 2m or 1500ms, got "${v}"`);
  const n = Number(m[1]);
  return Math.round(m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : m[2] === 'h' ? n * 3_600_000 : n);
};
export const collect = (v: string, prior: string[] = []): string[] => [...prior, v];

export const addOfflineOptions = (cmd: Command): Command =>
  cmd
    .option(
      '--k <K>',
      'report pass@k and pass^k for k = 1..K; a row with fewer than k graded attempts is left out at that k (default: the attempts every row was given, graded or not: Inspect epochs, a run --k)',
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
    .option(
      '--from-store',
      'read the trials from the store that passk process fills (embedded chDB or CLICKHOUSE_URL) instead of files',
    )
    .option('--dataset-version <v>', 'only this dataset version (repeatable)', collect)
    .option('--json', 'print JSON')
    .option('--markdown', 'print Markdown');

export const reportOptions = (f: OfflineFlags): ReportOptions => ({
  ...(f.k === undefined ? {} : { k: f.k }),
  minAttempts: f.minAttempts,
  ungradedAsFailure: f.ungradedAsFailure === true,
  includeConfirmation: f.includeConfirmation === true,
  ...(f.firstStage === undefined ? {} : { firstStage: f.firstStage }),
  bootstrap: { reps: f.bootstrap, seed: f.seed, confidence: f.confidence },
});

export type OutputFormat = 'table' | 'json' | 'markdown';
export const outputFormat = (f: OfflineFlags): OutputFormat => {
  if (f.json && f.markdown) throw new InputError('choose one of --json and --markdown');
  return f.json ? 'json' : f.markdown ? 'markdown' : 'table';
};

/** Reads every file (all or nothing) and tells stderr about repeated lines. */
const fileTrials = async (files: readonly string[], f: OfflineFlags): Promise<TrialRecorded[]> => {
  const { trials, files: read } = await readTrialFiles(files, { allowUnknownFields: f.allowUnknownFields === true });
  for (const r of read)
    if (r.duplicates > 0)
      writeStderr(
        `passk: ${r.file}: ${r.duplicates} lines repeat attempts already read (same event id and content); each counted once\n`,
      );
  return trials;
};

/** Says on stderr which runs the store leaves out because they were retracted (passk retract), one line each. */
const noteRetractions = async (cmd: Command, suites: readonly string[] | undefined): Promise<void> => {
  const runs = await withReader(cmd, (q) => retractedRuns(q, suites ? { suites } : {}));
  for (const r of runs)
    writeStderr(
      `passk: run ${r.run_id} of ${r.suite} ${r.agent_version} is retracted (${r.trials} trials on ${r.rows} rows, ` +
        `by ${r.retracted_by} at ${new Date(r.at).toISOString().slice(0, 19).replace('T', ' ')} UTC: ${r.reason}); ` +
        'not counted\n',
    );
};

/**
 * The trials a read command works on: the files, or with --from-store the store (each event id once),
 * filtered by suite and dataset version. Files and the store give the same trials the same groups.
 */
export const loadTrials = async (files: readonly string[], f: OfflineFlags, cmd: Command): Promise<TrialRecorded[]> => {
  if (f.fromStore && files.length > 0)
    throw new InputError('give trial files or --from-store, not both', { field: '--from-store' });
  if (!f.fromStore && files.length === 0)
    throw new InputError('no trial files given: name one or more files, or read the store with --from-store', {
      field: 'files',
    });
  const trials = f.fromStore
    ? await storeTrials(cmd, {
        ...(f.suite ? { suites: f.suite } : {}),
        ...(f.datasetVersion ? { datasetVersions: f.datasetVersion } : {}),
      })
    : await fileTrials(files, f);
  if (f.fromStore) await noteRetractions(cmd, f.suite);
  const where = f.fromStore ? 'the store' : 'the files';
  if (trials.length === 0 && f.fromStore)
    throw new InputError(
      `the store holds no trials (for these filters): record some with ${PASSK} run or ${PASSK} import, and run ${passkCommand('process --until-caught-up')} (or ${passkCommand('serve')})`,
    );
  const suites = [...new Set(trials.map((t) => t.suite))];
  const kept = trials.filter(
    (t) =>
      (!f.suite || f.suite.includes(t.suite)) && (!f.datasetVersion || f.datasetVersion.includes(t.dataset_version)),
  );
  if (kept.length === 0 && f.suite)
    throw new InputError(`no trials for suite ${f.suite.join(', ')}; suites in ${where}: ${suites.join(', ')}`);
  if (kept.length === 0 && f.datasetVersion)
    throw new InputError(
      `no trials of dataset version ${f.datasetVersion.join(', ')}; versions in ${where}: ${[...new Set(trials.map((t) => t.dataset_version))].join(', ')}`,
      { field: '--dataset-version' },
    );
  return kept;
};

/** `loadTrials` folded into groups. */
export const loadGroups = async (files: readonly string[], f: OfflineFlags, cmd: Command): Promise<Group[]> =>
  groupTrials(await loadTrials(files, f, cmd));

/**
 * The groups of trial files and of other tools' results files (detected and mapped exactly as `passk import` maps
 * them, docs/producers.md; flat files go through the flat readers), or of the store with --from-store, and the runs
 * that declared the attempts they gave each row: a tool file's own setting (`readToolResults`' `declaredK`, for each
 * of its runs and agents), or the store's completed runs with a `k` (`declaredRuns`). Flat trial files declare none.
 */
export const loadSources = async (
  files: readonly string[],
  flags: OfflineFlags,
  cmd: Command,
): Promise<{ groups: Group[]; declared: DeclaredRun[] }> => {
  if (flags.fromStore) {
    const groups = await loadGroups(files, flags, cmd);
    const declared = await withReader(cmd, (q) =>
      declaredRuns(q, {
        ...(flags.suite ? { suites: flags.suite } : {}),
        ...(flags.datasetVersion ? { datasetVersions: flags.datasetVersion } : {}),
      }),
    );
    return { groups, declared };
  }
  const tool = await Promise.all(files.map(async (file) => ({ file, read: await readToolResults(file) })));
  const toolFiles = tool.filter((t) => t.read !== undefined);
  if (toolFiles.length === 0) return { groups: await loadGroups(files, flags, cmd), declared: [] };
  for (const t of toolFiles) {
    if (t.read!.trials.length === 0) throw new InputError('no trials in this file', { file: t.file });
    writeStderr(`passk: ${t.file}: read as ${t.read!.format} results (${t.read!.trials.length} trials)\n`);
  }
  const flat = tool.filter((t) => t.read === undefined).map((t) => t.file);
  const flatTrials =
    flat.length > 0
      ? (await readTrialFiles(flat, { allowUnknownFields: flags.allowUnknownFields === true })).trials
      : [];
  const groups = groupTrials([...flatTrials, ...toolFiles.flatMap((t) => t.read!.trials)]);
  const wanted = flags.suite ? groups.filter((g) => flags.suite!.includes(g.key.suite)) : groups;
  if (wanted.length === 0)
    throw new InputError(
      `no trials for suite ${flags.suite!.join(', ')}; suites in the files: ${[...new Set(groups.map((g) => g.key.suite))].join(', ')}`,
    );
  const declared = new Map<string, DeclaredRun>();
  for (const { read } of toolFiles) {
    const k = read!.declaredK;
    if (k === undefined) continue;
    for (const t of read!.trials) {
      const run = {
        suite: t.suite,
        dataset_version: t.dataset_version,
        agent_version: t.agent.version,
        run_id: t.run_id,
      };
      declared.set(`${run.suite}\u0000${run.dataset_version}\u0000${run.agent_version}\u0000${run.run_id}`, {
        ...run,
        k,
      });
    }
  }
  return { groups: wanted, declared: [...declared.values()] };
};
