import { z } from 'zod';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../../../processors/core/classify.ts';
import type { AttemptSource } from '../../../processors/core/rowState.ts';
import type { TrialRecorded } from '../../../schemas/events/trialRecorded.ts';
import { trialExplorerFingerprint } from '../schema/explorerColumns.ts';
import { NOT_RETRACTED } from './retracted.ts';
import { add, fingerprintsStored, sameTally, type Tally } from './rowCounts.ts';
import { select, type Querier } from './select.ts';

/**
 * What the row explorer (the dashboard's Rows view, `/api/rows`) filters and sorts by, per (agent version, row)
 * of one suite and dataset version, counted by one GROUP BY in ClickHouse (chDB or a server: the same SQL, every
 * setting it relies on set by the client, sinks/clickhouse/settings.ts). It follows the explorer's own summary
 * (web/explorerView.ts: the core's fold and `summarizeAttempts` over every attempt, confirmation runs included,
 * under the default options):
 *
 * - a trial of a run retracted on its row is left out (`NOT_RETRACTED`);
 * - n and c: attempts with a verdict, and passes among them; `trials`: every trial;
 * - a check flips when two counted attempts answered it with different answers (JSON text, as stored), listed in
 *   the order the attempts answer them (what the output flip and the outputs are, only the page's rows show: the
 *   explorer summarizes those from their trials);
 * - failure categories: the distinct ones of every trial; tags: every trial's;
 * - mean latency and cost: summed one after another in the explorer's trial order (occurred_at, event_id), then
 *   divided, so the double is the one JavaScript's loop gives (a sort by them meets the same ties).
 *
 * A line is `exact` only when these plain counts are what the fold gives: no two trials share an event id or a
 * (run, attempt number) slot (copies, conflicting re-sends and re-runs of a slot are not), and (when the flipping
 * checks are asked for) every counted attempt that answered checks answered the same names in the same order. The others are the explorer's to
 * summarize from their trials (web/storeRows.ts): the same answer either way.
 */
export type ExplorerCountsScope = { suite: string; dataset_version: string };

export type ExplorerCount = {
  agent_version: string;
  row_id: string;
  exact: boolean;
  trials: number;
  n: number;
  c: number;
  class: string;
  flipping_checks: string[];
  failure_categories: string[];
  tags: string[];
  mean_latency_ms: number | null;
  mean_cost_usd: number | null;
};

const meanOf = (col: string) => `
         arrayMap(x -> x.3, arraySort(x -> (x.1, x.2),
           groupArrayIf((occurred_at, event_id, assumeNotNull(${col})), ${col} IS NOT NULL))) AS ${col}_all`;
const mean = (col: string) =>
  `if(empty(${col}_all), NULL, arrayFold((acc, x) -> acc + x, ${col}_all, toFloat64(0)) / length(${col}_all))`;

/**
 * What a page needs beyond n, c, categories and tags: the flipping checks (a filter on them) and the means (a
 * sort by them). Without them the query is lighter, and a row's check order does not make it inexact.
 */
export type ExplorerNeeds = { checks: boolean; means: boolean };

const explorerCountsSql = (needs: ExplorerNeeds): string => `
WITH passed IS NOT NULL AS counted,
     arrayMap(ch -> ch.name, checks) AS names
SELECT v, r,
       cnt = slots AND cnt = events${needs.checks ? ' AND seqs <= 1' : ''} AS exact,
       cnt, n, c,
       ${
         needs.checks
           ? `arrayFilter(name -> checked * countEqual(first_names, name) >= 2 AND arrayCount(p -> p.1 = name, pairs) > 1,
                   arrayDistinct(first_names))`
           : "CAST([], 'Array(String)')"
       } AS flips,
       cats, tg,
       ${needs.means ? mean('latency_ms') : 'NULL'} AS lat,
       ${needs.means ? mean('cost_usd') : 'NULL'} AS cost
FROM (
  SELECT agent_version AS v, row_id AS r,
         toUInt32(count()) AS cnt,
         uniqExact(cityHash64(run_id, attempt)) AS slots,
         uniqExact(cityHash64(event_id)) AS events,
         toUInt32(countIf(counted)) AS n,
         toUInt32(countIf(ifNull(passed, false))) AS c,${
           needs.checks
             ? `
         countIf(counted AND notEmpty(checks)) AS checked,
         uniqExactIf(names, counted AND notEmpty(checks)) AS seqs,
         anyIf(names, counted AND notEmpty(checks)) AS first_names,
         groupUniqArrayArrayIf(arrayMap(ch -> (ch.name, ch.answer), checks), counted) AS pairs,`
             : ''
         }${
           needs.means
             ? `
         ${meanOf('latency_ms')},
         ${meanOf('cost_usd')},`
             : ''
         }
         groupUniqArrayIf(toString(assumeNotNull(failure_category)), failure_category IS NOT NULL) AS cats,
         groupUniqArrayArray(arrayMap(t -> toString(t), tags)) AS tg
  FROM trials
  WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
    AND ${NOT_RETRACTED}
  GROUP BY agent_version, row_id
)`;

/**
 * One line of the counts: a version's rows (`r`) sharing every count, and (with the means) each row's mean latency
 * and cost in the same order (`lat`, `cost`; empty without the means: every row's is NULL).
 */
type Line = [
  v: string,
  r: string[],
  exact: boolean | number,
  cnt: number,
  n: number,
  c: number,
  flips: string[],
  cats: string[],
  tg: string[],
  lat: (number | null)[],
  cost: (number | null)[],
];
const COLUMNS = ['v', 'r', 'exact', 'cnt', 'n', 'c', 'flips', 'cats', 'tg', 'lat', 'cost'] as const;

const bad = (line: number, column: number, value: unknown): Error =>
  new Error(
    `explorerCounts: line ${line + 1} of the answer, column ${COLUMNS[column] ?? column}: unexpected ${JSON.stringify(value)}`,
  );
const strings = (x: unknown): boolean => Array.isArray(x) && x.every((s) => typeof s === 'string');

/** One line checked by hand (a schema per line costs seconds at 200k lines), or an error naming line and column. */
const checkLine = (l: unknown, i: number): Line => {
  if (!Array.isArray(l) || l.length !== COLUMNS.length) throw bad(i, -1, l);
  if (typeof l[0] !== 'string') throw bad(i, 0, l[0]);
  if (!strings(l[1])) throw bad(i, 1, l[1]);
  if (typeof l[2] !== 'boolean' && typeof l[2] !== 'number') throw bad(i, 2, l[2]);
  for (const j of [3, 4, 5]) if (typeof l[j] !== 'number') throw bad(i, j, l[j]);
  for (const j of [6, 7, 8]) if (!strings(l[j])) throw bad(i, j, l[j]);
  const ids = (l[1] as string[]).length;
  for (const j of [9, 10]) {
    const xs: unknown = l[j];
    if (!Array.isArray(xs) || (xs.length !== 0 && xs.length !== ids)) throw bad(i, j, xs);
    for (const x of xs) if (x !== null && typeof x !== 'number') throw bad(i, j, xs);
  }
  return l as Line;
};

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `explorerCountsSql` sent as one line per distinct set of counts (per version) with the ids of its rows: a few
 * hundred lines at 1M trials instead of 200k (writing and parsing those was about a third of the query's CPU). With
 * the means, each row's mean latency and cost come in two arrays beside the ids (every row has its own), rather
 * than one line per row.
 */
const grouped = (source: string, needs: ExplorerNeeds, extra = ''): string => `
SELECT v, ${needs.means ? 'arrayMap(x -> x.1, t)' : 't'}, exact, cnt, n, c, flips, cats, tg,
       ${needs.means ? 'arrayMap(x -> x.2, t)' : "CAST([], 'Array(Nullable(Float64))')"},
       ${needs.means ? 'arrayMap(x -> x.3, t)' : "CAST([], 'Array(Nullable(Float64))')"}${extra}
FROM (
  SELECT v, groupArray(${needs.means ? 'tuple(r, lat, cost)' : 'r'}) AS t, exact, cnt, n, c, flips, cats, tg${
    extra ? ', sum(h) AS hsum' : ''
  }
  FROM (${source})
  ${extra ? 'WHERE cnt > 0' : ''}
  GROUP BY v, exact, cnt, n, c, flips, cats, tg
)`;

const groupedSql = (needs: ExplorerNeeds): string => grouped(explorerCountsSql(needs), needs);

/**
 * The same lines as `groupedSql`, from the processors' row state (`row_state` FINAL: one row per row and version)
 * instead of a GROUP BY over every trial: each row's `explorer` tuple, computed by the store when the row state was
 * inserted (migration 20, schema/explorerColumns.ts: the same formulas over its attempt records and their extras),
 * and the row's tags. A row with a retracted run is not exact (its tags stay in the row state, the trials' views
 * leave the run's out): the explorer folds it from its trials, as every inexact row. Each line carries the sum of
 * its rows' explorer fingerprints (`hs`) for the proof; a row whose every attempt was retracted is no row.
 */
const stateSql = (needs: ExplorerNeeds): string =>
  grouped(
    `
  SELECT agent_version AS v, row_id AS r,
         explorer.single AND empty(retracted_runs)${needs.checks ? ' AND explorer.seqs <= 1' : ''} AS exact,
         explorer.cnt AS cnt, explorer.n AS n, explorer.c AS c,
         ${needs.checks ? 'explorer.flips' : "CAST([], 'Array(String)')"} AS flips,
         explorer.cats AS cats, arrayMap(t -> toString(t), tags) AS tg,
         ${needs.means ? 'explorer.lat' : 'NULL'} AS lat, ${needs.means ? 'explorer.cost' : 'NULL'} AS cost,
         explorer.h AS h
  FROM row_state FINAL
  WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}`,
    needs,
    ', toString(hsum) AS hs',
  );

/**
 * The other side of the proof: per version, the scope's stored trials (not retracted, every copy) and the sum of
 * their explorer fingerprints (the row-state fingerprint with category, latency and cost), in one pass.
 */
const trialsProofSql = (stored: boolean): string => `
SELECT agent_version AS v, count() AS cnt, toString(sum(${trialExplorerFingerprint(stored)})) AS h
FROM trials
WHERE suite = {suite:String} AND dataset_version = {dataset_version:String} AND ${NOT_RETRACTED}
GROUP BY v`;

/** Where the explorer's counts came from: the processors' row state (proved whole), or every trial. */
export type ExplorerCountsFrom = 'row_state' | 'trials';

/** The lines' rows: the rows of one line share its arrays (flips, categories, tags), which no reader changes. */
const rowsOf = (lines: readonly Line[]): ExplorerCount[] => {
  const out: ExplorerCount[] = [];
  for (const [v, ids, exact, cnt, n, c, flips, cats, tg, lats, costs] of lines) {
    const cls = classOf(n, c, DEFAULT_MIN_ATTEMPTS);
    const sorted = cats.length > 1 ? cats.sort(byCodeUnits) : cats;
    for (let i = 0; i < ids.length; i++)
      out.push({
        agent_version: v,
        row_id: ids[i]!,
        exact: Boolean(exact),
        trials: cnt,
        n,
        c,
        class: cls,
        flipping_checks: flips,
        failure_categories: sorted,
        tags: tg,
        mean_latency_ms: lats.length === 0 ? null : lats[i]!,
        mean_cost_usd: costs.length === 0 ? null : costs[i]!,
      });
  }
  return out;
};

const params = (scope: ExplorerCountsScope) => ({ suite: scope.suite, dataset_version: scope.dataset_version });

const linesOf = async (client: Querier, query: string, scope: ExplorerCountsScope, proof: boolean) => {
  const rs = await client.query({ query, query_params: params(scope), format: 'JSONCompactEachRow' });
  const lines = await rs.json<unknown>();
  return lines.map((l, i) => {
    if (!proof) return { line: checkLine(l, i), hs: '0' };
    if (!Array.isArray(l) || l.length !== COLUMNS.length + 1) throw bad(i, -1, l);
    const hs: unknown = l[COLUMNS.length];
    if (typeof hs !== 'string' || !/^\d+$/.test(hs)) throw bad(i, COLUMNS.length, hs);
    return { line: checkLine(l.slice(0, COLUMNS.length), i), hs };
  });
};

/** Every (agent version, row) of the scope with its explorer counts from every trial (lines in no particular order). */
export const explorerCountsFromTrials = async (
  client: Querier,
  scope: ExplorerCountsScope,
  needs: ExplorerNeeds = { checks: true, means: true },
): Promise<ExplorerCount[]> => rowsOf((await linesOf(client, groupedSql(needs), scope, false)).map((l) => l.line));

const trialsTally = async (client: Querier, scope: ExplorerCountsScope): Promise<Tally> => {
  const rs = await client.query({
    query: trialsProofSql(await fingerprintsStored(client)),
    query_params: params(scope),
    format: 'JSONEachRow',
  });
  const t: Tally = new Map();
  for (const l of await rs.json<{ v: unknown; cnt: unknown; h: unknown }>()) {
    if (typeof l.v !== 'string' || !/^\d+$/.test(String(l.cnt)) || typeof l.h !== 'string' || !/^\d+$/.test(l.h))
      throw new Error(`explorerCounts: unexpected proof line ${JSON.stringify(l)}`);
    add(t, l.v, BigInt(String(l.cnt)), BigInt(l.h));
  }
  return t;
};

/**
 * Every (agent version, row) of the scope with its explorer counts (lines in no particular order), and where they
 * came from: the processors' row state when it is proved to hold exactly the scope's stored trials with their
 * categories, latencies and costs, else every trial (`explorerCountsFromTrials`): the same answer either way. The
 * proof, per version, as the overview's (`countRows`, rowCounts.ts): the row states' attempts and the trials (every
 * copy, not retracted) are as many, and the sums (mod 2^64) of their explorer fingerprints are equal. It fails
 * while the row state lags the trials, on a store written without the processors, and wherever a row state written
 * before migration 20 (or restored from a changelog written by an older passk) lacks an extra that a trial has.
 */
export const explorerCountsFrom = async (
  client: Querier,
  scope: ExplorerCountsScope,
  needs: ExplorerNeeds = { checks: true, means: true },
): Promise<{ from: ExplorerCountsFrom; rows: ExplorerCount[] }> => {
  const [state, trials] = await Promise.all([
    linesOf(client, stateSql(needs), scope, true),
    trialsTally(client, scope),
  ]);
  const fromState: Tally = new Map();
  for (const { line, hs } of state) add(fromState, line[0], BigInt(line[3] * line[1].length), BigInt(hs));
  if (sameTally(fromState, trials)) return { from: 'row_state', rows: rowsOf(state.map((l) => l.line)) };
  return { from: 'trials', rows: await explorerCountsFromTrials(client, scope, needs) };
};

/**
 * Every (agent version, row) of the scope with its explorer counts (lines in no particular order; rows counted
 * alike share their arrays: read them, do not change them).
 */
export const explorerCounts = async (
  client: Querier,
  scope: ExplorerCountsScope,
  needs: ExplorerNeeds = { checks: true, means: true },
): Promise<ExplorerCount[]> => (await explorerCountsFrom(client, scope, needs)).rows;

/**
 * The scope's check names in the order the explorer meets them (rows by id, then versions, then trials by
 * (occurred_at, event_id), then each trial's checks in order): each name's first place, read with FINAL as the
 * explorer's trials are (a conflicting re-send of an event is one trial).
 *
 * Only the trials of a few rows are ordered: for each distinct check-name sequence (of a trial, FINAL, not retracted)
 * the least row id that has it (the subquery: one pass over the names alone, no ARRAY JOIN). A name's first row is
 * the least of those rows over the sequences that hold it, so it is among them, and every other row holding the name
 * comes after it: ordering the names over the trials of those rows alone gives each name the same first place as
 * ordering them over every trial (a few hundred milliseconds less at 1M trials).
 */
export const explorerCheckNames = async (client: Querier, scope: ExplorerCountsScope): Promise<string[]> =>
  (
    await select(
      client,
      z.object({ name: z.string() }),
      `SELECT name FROM (
         SELECT name, min((row_id, toString(agent_version), occurred_at, event_id, i)) AS first
         FROM trials FINAL
         ARRAY JOIN arrayMap(ch -> ch.name, checks) AS name, arrayEnumerate(checks) AS i
         PREWHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
           AND row_id IN (
             SELECT min(row_id)
             FROM trials FINAL
             WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
               AND ${NOT_RETRACTED} AND notEmpty(checks)
             GROUP BY checks.name)
         WHERE ${NOT_RETRACTED}
         GROUP BY name)
       ORDER BY first`,
      { suite: scope.suite, dataset_version: scope.dataset_version },
    )
  ).map((r) => r.name);

/**
 * What the explorer reads of a trial (web/explorerView.ts): what the row fold reads, and what a row shows (input,
 * expected answer, categories, latency and cost). A TrialRecorded is one.
 */
export type ExplorerTrial = AttemptSource &
  Pick<
    TrialRecorded,
    'suite' | 'dataset_version' | 'row_id' | 'input' | 'expected' | 'failure_category' | 'latency_ms' | 'cost_usd'
  > & { agent: Pick<TrialRecorded['agent'], 'version'> };

/**
 * The trials of these rows of the scope as the explorer reads them, in `loadTrialsForReport`'s order (version,
 * row, occurred_at, event_id) and with what it reads the same: each event id once (FINAL), retracted runs left out.
 * Only those columns are read (not the actions, references, grader or agent fields), and the rows are picked
 * before FINAL merges (PREWHERE on columns of the sorting key, which every copy of a trial shares), so a page
 * reads its rows' trials, not every trial's columns. Checks come as names and answers (JSON text, parsed here).
 */
const EXPLORER_TRIALS_SQL = `
SELECT agent_version, row_id, event_id, toUnixTimestamp64Milli(occurred_at), run_id, attempt,
       input, output, expected, passed,
       arrayMap(ch -> ch.name, checks), arrayMap(ch -> ch.answer, checks),
       failure_category, latency_ms, cost_usd, tags
FROM trials FINAL
PREWHERE suite = {suite:String} AND dataset_version = {dataset_version:String} AND row_id IN {row_ids:Array(String)}
WHERE ${NOT_RETRACTED}
ORDER BY agent_version, row_id, occurred_at, event_id`;

type TrialLine = [
  v: string,
  r: string,
  event: string,
  at: number,
  run: string,
  attempt: number,
  input: string | null,
  output: string | null,
  expected: string | null,
  passed: boolean | null,
  names: string[],
  answers: string[],
  category: string | null,
  latency: number | null,
  cost: number | null,
  tags: string[],
];
const TRIAL_COLUMNS = [
  'agent_version',
  'row_id',
  'event_id',
  'occurred_at',
  'run_id',
  'attempt',
  'input',
  'output',
  'expected',
  'passed',
  'check names',
  'check answers',
  'failure_category',
  'latency_ms',
  'cost_usd',
  'tags',
] as const;
const STRING = [0, 1, 2, 4];
const NUMBER = [3, 5];
const STRING_OR_NULL = [6, 7, 8, 12];
const NUMBER_OR_NULL = [13, 14];
const STRINGS = [10, 11, 15];

const badTrial = (line: number, column: number, value: unknown): Error =>
  new Error(
    `explorerTrials: line ${line + 1} of the answer, column ${TRIAL_COLUMNS[column] ?? column}: unexpected ${JSON.stringify(value)}`,
  );

const checkTrialLine = (l: unknown, i: number): TrialLine => {
  if (!Array.isArray(l) || l.length !== TRIAL_COLUMNS.length) throw badTrial(i, -1, l);
  for (const j of STRING) if (typeof l[j] !== 'string') throw badTrial(i, j, l[j]);
  for (const j of NUMBER) if (typeof l[j] !== 'number') throw badTrial(i, j, l[j]);
  for (const j of STRING_OR_NULL) if (l[j] !== null && typeof l[j] !== 'string') throw badTrial(i, j, l[j]);
  for (const j of NUMBER_OR_NULL) if (l[j] !== null && typeof l[j] !== 'number') throw badTrial(i, j, l[j]);
  if (l[9] !== null && typeof l[9] !== 'boolean') throw badTrial(i, 9, l[9]);
  for (const j of STRINGS) if (!strings(l[j])) throw badTrial(i, j, l[j]);
  if ((l[10] as string[]).length !== (l[11] as string[]).length) throw badTrial(i, 11, l[11]);
  return l as TrialLine;
};

/** The trials of `rowIds` in the scope, as the explorer reads them (what `loadTrialsForReport` gives, less). */
export const explorerTrials = async (
  client: Querier,
  scope: ExplorerCountsScope & { rowIds: readonly string[] },
): Promise<ExplorerTrial[]> => {
  const rs = await client.query({
    query: EXPLORER_TRIALS_SQL,
    query_params: { suite: scope.suite, dataset_version: scope.dataset_version, row_ids: scope.rowIds },
    format: 'JSONCompactEachRow',
  });
  const lines = await rs.json<unknown>();
  const out: ExplorerTrial[] = new Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    const [v, r, event, at, run, attempt, input, output, expected, passed, names, answers, category, lat, cost, tags] =
      checkTrialLine(lines[i], i);
    const t: ExplorerTrial = {
      event_id: event,
      occurred_at: at,
      suite: scope.suite,
      dataset_version: scope.dataset_version,
      row_id: r,
      run_id: run,
      attempt,
      agent: { version: v },
      output,
      expected,
      passed,
      checks: names.map((name, j) => ({ name, answer: JSON.parse(answers[j]!) as string | number | boolean | null })),
      tags,
    };
    // absent where the stored trial has none, as rowToTrial gives it
    if (input !== null) t.input = input;
    if (category !== null) t.failure_category = category as ExplorerTrial['failure_category'];
    if (lat !== null) t.latency_ms = lat;
    if (cost !== null) t.cost_usd = cost;
    out[i] = t;
  }
  return out;
};

/** At most this many words go to the search's first pass. */
const MAX_WORDS = 64;

/** A text with the two characters outside ASCII whose lower case JavaScript writes with an ASCII letter folded. */
const folded = (text: string): string => `replaceAll(replaceAll(${text}, '\u0130', 'i'), '\u212A', 'k')`;

/**
 * Rows of the scope that may hold every one of `words` (lower-case ASCII words: others are not passed here) in
 * their id, an input, an expected answer, or an output of one of `versions`: case-insensitively, as a superset of
 * what the explorer's search keeps (its exact test runs on these rows' trials). The two characters outside ASCII
 * whose lower case JavaScript writes with an ASCII letter (U+0130 İ, U+212A Kelvin) are folded first; then ASCII
 * case-insensitive matching of ASCII words is what JavaScript's `toLowerCase().includes` finds (the bytes of other
 * characters never match an ASCII word). One `max` per word over the row's trials of one search in the trial's
 * texts joined by a line break (a word holds no white space, so no match spans two of them; one search instead of
 * one per text: about 10% less CPU at 1M trials), the row id once per row.
 */
export const rowsMaybeMatching = async (
  client: Querier,
  scope: ExplorerCountsScope & { words: readonly string[]; versions: readonly string[] },
): Promise<string[]> => {
  const words = scope.words.slice(0, MAX_WORDS);
  const texts = folded(
    "concat(ifNull(input, ''), '\\n', ifNull(expected, ''), '\\n', " +
      "if(has({versions:Array(String)}, toString(agent_version)), ifNull(output, ''), ''))",
  );
  const each = words.map((_, i) => {
    const found = (text: string) => `positionCaseInsensitive(${text}, {w${i}:String}) > 0`;
    return `(${found(folded('row_id'))} OR max(${found(texts)}))`;
  });
  return (
    await select(
      client,
      z.object({ row_id: z.string() }),
      `SELECT row_id
       FROM trials
       WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
         AND ${NOT_RETRACTED}
       GROUP BY row_id
       HAVING ${each.length > 0 ? each.join(' AND ') : '1'}`,
      {
        suite: scope.suite,
        dataset_version: scope.dataset_version,
        versions: scope.versions,
        ...Object.fromEntries(words.map((w, i) => [`w${i}`, w])),
      },
    )
  ).map((r) => r.row_id);
};
