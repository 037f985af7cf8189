import { z } from 'zod';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../../../processors/core/classify.ts';
import type { AttemptSource } from '../../../processors/core/rowState.ts';
import type { TrialRecorded } from '../../../schemas/events/trialRecorded.ts';
import { NOT_RETRACTED } from './retracted.ts';
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
  lat: number | null,
  cost: number | null,
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
  for (const j of [9, 10]) if (l[j] !== null && typeof l[j] !== 'number') throw bad(i, j, l[j]);
  return l as Line;
};

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Without the means, `explorerCountsSql` sent as one line per distinct set of counts (per version) with the ids of
 * its rows: a few hundred lines at 1M trials instead of 200k (writing and parsing those was about a third of the
 * query's CPU). With them, every row has its own means, and the lines stay one per row.
 */
const groupedSql = (needs: ExplorerNeeds): string =>
  needs.means
    ? `SELECT v, [r], exact, cnt, n, c, flips, cats, tg, lat, cost FROM (${explorerCountsSql(needs)})`
    : `SELECT v, groupArray(r), exact, cnt, n, c, flips, cats, tg, lat, cost FROM (${explorerCountsSql(needs)})
       GROUP BY v, exact, cnt, n, c, flips, cats, tg, lat, cost`;

/** Every (agent version, row) of the scope with its explorer counts (lines in no particular order). */
export const explorerCounts = async (
  client: Querier,
  scope: ExplorerCountsScope,
  needs: ExplorerNeeds = { checks: true, means: true },
): Promise<ExplorerCount[]> => {
  const rs = await client.query({
    query: groupedSql(needs),
    query_params: { suite: scope.suite, dataset_version: scope.dataset_version },
    format: 'JSONCompactEachRow',
  });
  const lines = await rs.json<unknown>();
  const out: ExplorerCount[] = [];
  for (let i = 0; i < lines.length; i++) {
    const [v, ids, exact, cnt, n, c, flips, cats, tg, lat, cost] = checkLine(lines[i], i);
    const cls = classOf(n, c, DEFAULT_MIN_ATTEMPTS);
    const sorted = cats.length > 1 ? cats.sort(byCodeUnits) : cats;
    for (const r of ids)
      out.push({
        agent_version: v,
        row_id: r,
        exact: Boolean(exact),
        trials: cnt,
        n,
        c,
        class: cls,
        flipping_checks: [...flips],
        failure_categories: [...sorted],
        tags: [...tg],
        mean_latency_ms: lat,
        mean_cost_usd: cost,
      });
  }
  return out;
};

/**
 * The scope's check names in the order the explorer meets them (rows by id, then versions, then trials by
 * (occurred_at, event_id), then each trial's checks in order): each name's first place, read with FINAL as the
 * explorer's trials are (a conflicting re-send of an event is one trial).
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
         WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
           AND ${NOT_RETRACTED}
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

/** At most this many words go to the search's first pass (multiSearch takes up to 255 needles). */
const MAX_WORDS = 64;

/**
 * Rows of the scope that may hold every one of `words` (lower-case ASCII words: others are not passed here) in
 * their id, an input, an expected answer, or an output of one of `versions`: case-insensitively, as a superset of
 * what the explorer's search keeps (its exact test runs on these rows' trials). The two characters outside ASCII
 * whose lower case JavaScript writes with an ASCII letter (U+0130 İ, U+212A Kelvin) are folded first.
 */
export const rowsMaybeMatching = async (
  client: Querier,
  scope: ExplorerCountsScope & { words: readonly string[]; versions: readonly string[] },
): Promise<string[]> =>
  (
    await select(
      client,
      z.object({ row_id: z.string() }),
      `SELECT row_id
       FROM trials
       WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
         AND ${NOT_RETRACTED}
       GROUP BY row_id
       HAVING arrayAll(x -> x > 0, maxForEach(arrayMap(p -> toUInt8(p > 0), multiSearchAllPositionsCaseInsensitiveUTF8(
         replaceAll(replaceAll(concat(row_id, '\\n', ifNull(input, ''), '\\n', ifNull(expected, ''), '\\n',
                                      if(has({versions:Array(String)}, toString(agent_version)), ifNull(output, ''), '')),
                               '\u0130', 'i'), '\u212A', 'k'),
         {words:Array(String)}))))`,
      {
        suite: scope.suite,
        dataset_version: scope.dataset_version,
        words: scope.words.slice(0, MAX_WORDS),
        versions: scope.versions,
      },
    )
  ).map((r) => r.row_id);
