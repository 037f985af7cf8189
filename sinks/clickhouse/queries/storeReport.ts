import { minOf, pushAll } from '../../../processors/core/arrays.ts';
import { classOf } from '../../../processors/core/classify.ts';
import { comparePairs, type Comparison } from '../../../processors/core/compare.ts';
import { confirmationOutcome } from '../../../processors/core/confirm.ts';
import { groupTrials, rowIdOrder } from '../../../processors/core/groups.ts';
import { sideRow, type CountedPair, type CountedSide } from '../../../processors/core/pairing.ts';
import { z } from 'zod';
import { DEFAULT_ADAPTIVE, firstStageOfRuns } from '../../../processors/core/adaptive.ts';
import {
  buildReport,
  confirmationAttempts,
  DEFAULT_REPORT_OPTIONS,
  reportGroup,
  summarizeGroup,
  type ReportedGroup,
  type ReportOptions,
} from '../../../processors/core/report.ts';
import type { RowState } from '../../../processors/core/rowState.ts';
import type { ReportRow } from '../../../processors/core/rowSummary.ts';
import { isConfirmationRun, mostCommon } from '../../../processors/core/screening.ts';
import { loadTrialsForReport } from './report.ts';
import type { DeclaredRun } from '../../../processors/core/declaredK.ts';
import { declaredRuns } from './declaredRuns.ts';
import { rowCounts, type CountedRow, type RowCountsScope } from './rowCounts.ts';
import { select, type Querier } from './select.ts';
import { NOT_RETRACTED } from './retracted.ts';

/**
 * `passk report`'s groups and `passk compare`'s document for one suite and dataset version, from per-row counts
 * the store computes (`rowCounts`) instead of every trial: the core's own functions (`reportGroup`,
 * `comparePairs`) over one small record per row. A row the counts cannot answer exactly (copies of one trial, two
 * trials in one attempt slot, checks answered in different orders; in a comparison, more planned attempts than
 * the plan, or a confirmed regression, whose first divergent check needs the answers) is folded and summarized
 * by the core from its own trials. The numbers are those of `buildReport` and `compareVersions` over every trial
 * (tested on a generated store, test/integration/storeReport.int.test.ts).
 */
export type StoreScope = { suite: string; dataset_version: string };
/** The report's and the comparison's options, with every attempt of a confirmation run left out of the report. */
export type StoreReportOptions = Omit<
  ReportOptions,
  'includeConfirmation' | 'firstStage' | 'headlineFirstStage' | 'adaptiveRuns'
>;

const isMarked = isConfirmationRun({});

/** Adaptive runs' first stages from their rounds on the log (`readAdaptiveRounds`: run id → `--first-k`). */
export type Rounds = ReadonlyMap<string, number>;
const NO_ROUNDS: Rounds = new Map();

/**
 * The rounds once read (given, or still being read from the event log by the caller), with what `use` makes of
 * them: so a caller starts the read and the store's queries together, and the counts never wait for the log.
 */
const withRounds = async <T>(
  read: Rounds | Promise<Rounds>,
  use: (rounds: Rounds) => Promise<T>,
): Promise<[Rounds, T]> => {
  const rounds = await read;
  return [rounds, await use(rounds)];
};

/** Where the per-row counts come from: the store's query (`rowCounts`), or an answer kept for a while (`sharedRowCounts`). */
export type CountsSource = (scope: RowCountsScope) => Promise<Map<string, CountedRow[]>>;

const countsOf =
  (client: Querier): CountsSource =>
  (scope) =>
    rowCounts(client, scope);

/**
 * The per-row counts with one answer shared by the overview and the comparison of one scope while the store is
 * unchanged: the counts of every version of a (suite, dataset version, options), asked while the store's write
 * position (`watermark`) stays the same, answer a comparison of two of those versions too, instead of a query of its
 * own (the counts query was 1.6 s of a 4.2 s cold comparison at 200k trials). Only the answers of the latest
 * watermark are kept, and a failed one is not. The counts are not changed by their readers (`reportFromStore` and
 * `comparisonFromStore` build their own records from them), so one answer serves both.
 */
export const sharedRowCounts = (client: Querier, watermark: () => Promise<string>): CountsSource => {
  let mark: string | undefined;
  const kept = new Map<string, Promise<Map<string, CountedRow[]>>>();
  return async (scope) => {
    const now = await watermark();
    if (now !== mark) {
      kept.clear();
      mark = now;
    }
    const options = [scope.suite, scope.dataset_version, scope.ungradedAsFailure ?? false, scope.minAttempts ?? null];
    const allKey = JSON.stringify([...options, null]);
    const versions = scope.versions && scope.versions.length > 0 ? [...scope.versions].sort() : null;
    const all = kept.get(allKey);
    if (all && versions) {
      const answer = await all;
      return new Map(versions.flatMap((v) => (answer.has(v) ? [[v, answer.get(v)!] as const] : [])));
    }
    const key = versions ? JSON.stringify([...options, versions]) : allKey;
    const found = kept.get(key);
    if (found) return found;
    const answer = rowCounts(client, scope);
    kept.set(key, answer);
    answer.catch(() => {
      if (kept.get(key) === answer) kept.delete(key);
    });
    return answer;
  };
};

/** Row states of these rows, by agent version, folded by the core from their stored trials. */
const foldRows = async (
  client: Querier,
  scope: StoreScope,
  rowIds: ReadonlySet<string>,
  versions: readonly string[] = [],
): Promise<Map<string, Map<string, RowState>>> => {
  if (rowIds.size === 0) return new Map();
  const trials = await loadTrialsForReport(client, {
    suites: [scope.suite],
    datasetVersions: [scope.dataset_version],
    agentVersions: versions,
    rowIds: [...rowIds],
  });
  return new Map(groupTrials(trials).map((g) => [g.key.agent_version, g.rows]));
};

/** The runs of the scope that declared their attempts per row: the options' when given, else the store's `runs`. */
const declaredOf = async (
  client: Querier,
  scope: StoreScope,
  opts: StoreReportOptions,
): Promise<readonly DeclaredRun[]> =>
  opts.declared ?? (await declaredRuns(client, { suites: [scope.suite], datasetVersions: [scope.dataset_version] }));

const byRowId = (a: { row_id: string }, b: { row_id: string }): number => rowIdOrder(a.row_id, b.row_id);

const AdaptiveVersion = z.object({ agent_version: z.string(), runs: z.array(z.string()) });
/** A version's first stage and where it came from: its runs' rounds, or the default when none of them has any. */
type FirstStage = ReturnType<typeof firstStageOfRuns>;

/**
 * The scope's agent versions with an adaptive run's trials (run id `adaptive-…`, as `passk report` tells one, or a run
 * the rounds name), each with its first stage: its runs' `--first-k` from their rounds (`firstStageOfRuns`, as
 * `passk compare --from-store` takes it), else the default.
 */
const adaptiveVersions = async (
  client: Querier,
  scope: StoreScope,
  only?: readonly string[],
  rounds: Rounds = NO_ROUNDS,
): Promise<Map<string, FirstStage>> =>
  new Map(
    (
      await select(
        client,
        AdaptiveVersion,
        `SELECT agent_version, groupUniqArray(run_id) AS runs FROM trials
         WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
           AND (empty({versions:Array(String)}) OR has({versions:Array(String)}, agent_version))
           AND (startsWith(lower(run_id), 'adaptive-') OR has({listed:Array(String)}, run_id)) AND ${NOT_RETRACTED}
         GROUP BY agent_version`,
        {
          suite: scope.suite,
          dataset_version: scope.dataset_version,
          versions: [...(only ?? [])],
          listed: [...rounds.keys()],
        },
      )
    ).map((v) => [v.agent_version, firstStageOfRuns(v.runs, rounds)] as const),
  );

/**
 * The reports of the scope's versions with an adaptive run, as `passk report` makes them (`buildReport` with
 * `headlineFirstStage`, docs/adaptive.md): mean accuracy, pass@k, pass^k and the flip rate from each row's
 * first-stage attempts, the rest from all. Their trials are folded whole: the counts cannot tell a row's first stage.
 * Each version's first stage is its runs' `--first-k` from their rounds on the log (`rounds`), else the default.
 */
const adaptiveReports = async (
  client: Querier,
  scope: StoreScope,
  opts: StoreReportOptions,
  declared: readonly DeclaredRun[],
  rounds: Rounds,
  versions: ReadonlyMap<string, FirstStage>,
): Promise<Map<string, ReportedGroup>> => {
  if (versions.size === 0) return new Map();
  const trials = await loadTrialsForReport(client, {
    suites: [scope.suite],
    datasetVersions: [scope.dataset_version],
    agentVersions: [...versions.keys()],
  });
  const grouped = groupTrials(trials);
  const reports = new Map<string, ReportedGroup>();
  // one report per first stage (versions may differ): each version's group from the report of its own k
  for (const k of new Set([...versions.values()].map((s) => s.k))) {
    const { groups } = buildReport(grouped, {
      ...opts,
      declared,
      headlineFirstStage: k,
      adaptiveRuns: [...rounds.keys()],
    });
    for (const g of groups) {
      const stage = versions.get(g.agent_version);
      if (stage?.k !== k) continue;
      // the default --first-k, no round of its runs found on the log: said as an assumption (`first_stage.assumed`)
      reports.set(
        g.agent_version,
        stage.from === 'default' && g.first_stage ? { ...g, first_stage: { ...g.first_stage, assumed: true } } : g,
      );
    }
  }
  return reports;
};

/** The report of every agent version in the scope (`buildReport(...).groups`), versions in key order. */
export const reportFromStore = async (
  client: Querier,
  scope: StoreScope,
  opts: StoreReportOptions = DEFAULT_REPORT_OPTIONS,
  counts: CountsSource = countsOf(client),
  roundsRead: Rounds | Promise<Rounds> = NO_ROUNDS,
): Promise<ReportedGroup[]> => {
  // the small queries beside the counts, not after them: a cold answer waits for the slowest, not their sum; the
  // rounds too (read from the event log while the store counts)
  const [counted, declared, [rounds, adaptiveOnes]] = await Promise.all([
    counts({ ...scope, ungradedAsFailure: opts.ungradedAsFailure, minAttempts: opts.minAttempts }),
    declaredOf(client, scope, opts),
    withRounds(roundsRead, (rounds) => adaptiveVersions(client, scope, undefined, rounds)),
  ]);
  const inexact = new Set<string>();
  for (const rows of counted.values()) for (const r of rows) if (!r.exact) inexact.add(r.row_id);
  const [folded, adaptive] = await Promise.all([
    foldRows(client, scope, inexact),
    adaptiveReports(client, scope, opts, declared, rounds, adaptiveOnes),
  ]);
  return [...counted.keys()]
    .sort((a, b) => a.localeCompare(b))
    .map((version) => {
      // an adaptive version's headline numbers come from its runs' first stage: `passk report`'s own function
      const whole = adaptive.get(version);
      if (whole) return whole;
      const key = { ...scope, agent_version: version };
      const states = folded.get(version) ?? new Map<string, RowState>();
      const rows: ReportRow[] = [];
      let confirmation = 0;
      for (const r of counted.get(version)!)
        if (!states.has(r.row_id)) {
          rows.push(r.planned);
          confirmation += r.confirmation.attempts;
        }
      const group = { key, rows: states };
      pushAll(rows, summarizeGroup(group, opts));
      confirmation += confirmationAttempts(group);
      rows.sort(byRowId);
      return {
        ...reportGroup(key, rows, { ...opts, declared }),
        confirmation_attempts: { count: confirmation, counted: false },
      };
    });
};

const emptySide = (row_id: string, minAttempts: number): CountedSide => {
  const cls = classOf(0, 0, minAttempts);
  return {
    screening: {
      row_id,
      n: 0,
      c: 0,
      ungraded: 0,
      class: cls,
      outputs_differ: null,
      forbidden_trials: 0,
      checks: [],
    },
    all: { n: 0, c: 0, ungraded: 0, class: cls },
    confirmation: { n: 0, c: 0 },
  };
};

/**
 * A side from its counts: only for an exact row with no more planned attempts than the plan (all screened). The
 * counted row's own records are the side's (`all` carries its class at the scope's minimum attempts), not copies.
 */
const countedSide = (r: CountedRow | undefined, row_id: string, minAttempts: number): CountedSide =>
  r === undefined ? emptySide(row_id, minAttempts) : { screening: r.planned, all: r.all, confirmation: r.confirmation };

const isLost = (p: CountedPair): boolean =>
  p.baseline.screening.class === 'stable_correct' && p.candidate.screening.class !== 'stable_correct';

/** Whether ids are in row-id order already (the store sends each version's rows so: one comparison per row). */
const inRowIdOrder = (rows: readonly CountedRow[]): boolean => {
  for (let i = 1; i < rows.length; i++) if (rowIdOrder(rows[i - 1]!.row_id, rows[i]!.row_id) > 0) return false;
  return true;
};

/**
 * Every row id of either version, in row-id order (the order of the baseline's ids, then the candidate's own,
 * sorted), with each version's counted row at the same index. When both versions counted the same ids in row-id
 * order (every dataset both ran whole), that is their own order, read without a map of 100k ids.
 */
const alignRows = (
  base: readonly CountedRow[],
  cand: readonly CountedRow[],
): { ids: string[]; b: (CountedRow | undefined)[]; c: (CountedRow | undefined)[] } => {
  let same = base.length === cand.length;
  for (let i = 0; same && i < base.length; i++) same = base[i]!.row_id === cand[i]!.row_id;
  if (same && inRowIdOrder(base)) return { ids: base.map((r) => r.row_id), b: [...base], c: [...cand] };
  const bOf = new Map(base.map((r) => [r.row_id, r]));
  const cOf = new Map(cand.map((r) => [r.row_id, r]));
  const ids = [...new Set([...bOf.keys(), ...cOf.keys()])].sort(rowIdOrder);
  return { ids, b: ids.map((id) => bOf.get(id)), c: ids.map((id) => cOf.get(id)) };
};

/** `compareVersions` of two agent versions on the scope; undefined unless both have trials there. */
export const comparisonFromStore = async (
  client: Querier,
  scope: StoreScope & { baseline: string; candidate: string },
  opts: StoreReportOptions = DEFAULT_REPORT_OPTIONS,
  counts: CountsSource = countsOf(client),
  roundsRead: Rounds | Promise<Rounds> = NO_ROUNDS,
): Promise<Comparison | undefined> => {
  const where = { suite: scope.suite, dataset_version: scope.dataset_version };
  const versions = [scope.baseline, scope.candidate];
  // the small queries beside the counts, not after them: a cold answer waits for the slowest, not their sum; the
  // rounds too (read from the event log while the store counts)
  const [counted, declared, [rounds, stages]] = await Promise.all([
    counts({
      ...where,
      versions,
      ungradedAsFailure: opts.ungradedAsFailure,
      minAttempts: opts.minAttempts,
    }),
    declaredOf(client, where, opts),
    withRounds(roundsRead, (rounds) => adaptiveVersions(client, where, versions, rounds)),
  ]);
  const baseRows = counted.get(scope.baseline) ?? [];
  const candRows = counted.get(scope.candidate) ?? [];
  if (baseRows.length === 0 || candRows.length === 0) return undefined;
  // a version with an adaptive run: every row folded, for its first stage (the counts cannot tell it)
  // one first stage for both, as `passk compare --from-store` takes it: the smallest --first-k of their runs' rounds
  const adaptive = new Set(stages.keys());
  const firstK = stages.size > 0 ? minOf([...stages.values()].map((s) => s.k)) : DEFAULT_ADAPTIVE.firstK;
  // assumed when no run's rounds give that first stage: the default --first-k, its rounds not found on the log
  const assumed = stages.size > 0 && ![...stages.values()].some((s) => s.from === 'rounds' && s.k === firstK);
  const stageOf = (version: string): number | undefined => (adaptive.has(version) ? firstK : undefined);
  const staged = { ...opts, headlineFirstStage: firstK, adaptiveRuns: [...rounds.keys()] };
  // every row of either version in row-id order, with each side's counts at the same index
  const { ids, b: bAt, c: cAt } = alignRows(baseRows, candRows);

  // 1. rows only the fold can count; then the plan of each side (`plannedAttempts`) over every row
  const fold = new Set<string>();
  for (const side of [baseRows, candRows]) for (const r of side) if (!r.exact || adaptive.size > 0) fold.add(r.row_id);
  let folded = await foldRows(client, where, fold, versions);
  const planOf = (side: readonly CountedRow[], version: string): number => {
    const states = folded.get(version);
    const counts: number[] = [];
    for (const r of side) {
      const s = states?.get(r.row_id);
      counts.push(s ? s.attempts.filter((a) => !isMarked(a.run_id)).length : r.planned_attempts);
    }
    return mostCommon(counts);
  };
  const screen = { baseline: planOf(baseRows, scope.baseline), candidate: planOf(candRows, scope.candidate) };

  // 2. rows whose screening is not every planned attempt, and confirmed regressions: the fold too
  const min = opts.minAttempts;
  // a pair is built once per row (here for the rows the counts answer; 200k rows at 1M trials), kept by index
  const pairs: (CountedPair | undefined)[] = new Array<CountedPair | undefined>(ids.length);
  const more = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    const row_id = ids[i]!;
    if (fold.size > 0 && fold.has(row_id)) continue;
    const b = bAt[i];
    const c = cAt[i];
    if ((b && b.planned_attempts > screen.baseline) || (c && c.planned_attempts > screen.candidate)) more.add(row_id);
    else {
      const p: CountedPair = {
        row_id,
        baseline: countedSide(b, row_id, min),
        candidate: countedSide(c, row_id, min),
      };
      if (isLost(p) && confirmationOutcome(p) === 'confirmed_regression') more.add(row_id);
      else pairs[i] = p;
    }
  }
  if (more.size > 0) {
    const extra = await foldRows(client, where, more, versions);
    folded = new Map(versions.map((v) => [v, new Map([...(folded.get(v) ?? []), ...(extra.get(v) ?? [])])] as const));
    for (const id of more) fold.add(id);
  }

  const EMPTY: RowState = { attempts: [], tags: [] };
  const rows = ids.map((row_id, i): CountedPair => {
    const counted = pairs[i];
    if (counted) return counted;
    const b = folded.get(scope.baseline)?.get(row_id) ?? EMPTY;
    const c = folded.get(scope.candidate)?.get(row_id) ?? EMPTY;
    return {
      row_id,
      baseline: sideRow(row_id, b, screen.baseline, staged, stageOf(scope.baseline)),
      candidate: sideRow(row_id, c, screen.candidate, staged, stageOf(scope.candidate)),
    };
  });
  const cmp = comparePairs(
    { ...where, baseline: { version: scope.baseline }, candidate: { version: scope.candidate } },
    { screen_attempts: screen, rows },
    { ...staged, declared },
  );
  return assumed ? { ...cmp, first_stage_assumed: true } : cmp;
};
