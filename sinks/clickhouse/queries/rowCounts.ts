import { classOf, DEFAULT_MIN_ATTEMPTS, type StabilityClass } from '../../../processors/core/classify.ts';
import type { CheckTally, ReportRow } from '../../../processors/core/rowSummary.ts';
import { TRIAL_FINGERPRINT } from '../schema/countsColumns.ts';
import { NOT_RETRACTED } from './retracted.ts';
import type { Querier } from './select.ts';

/**
 * Per-row counts of one suite and dataset version, one line per (agent version, row), counted in ClickHouse (chDB
 * or a server: the same SQL), so the report and the comparison are built from them without moving the trials into
 * Node: from the processors' row state when it is proved to hold exactly the stored trials (`countRows`: one row
 * per row and version instead of a GROUP BY over every trial), else by one GROUP BY over the trials. The counts follow the core's fold and summary (processors/core/rowSummary.ts):
 *
 * - a trial of a run retracted on its row is left out (`NOT_RETRACTED`, as every view of the stored trials);
 * - an attempt of a run whose id starts with "confirm" (any case) is a confirmation attempt (`isConfirmationRun`);
 *   the others are the planned ones, and the report's and the screening's attempts;
 * - an attempt counts when it has a verdict (or always, under ungraded-as-failure) and passes when its verdict is
 *   true; outputs differ when two counted outputs differ (compared by a 64-bit hash; the core compares 53-bit
 *   hashes); a check repeats when two counted attempts answered it and flips when those answers (JSON text, as
 *   stored) differ.
 *
 * Each version's rows come ordered by (length, id) in bytes, the core's row order (`rowIdOrder`) for ids that differ
 * only in a number, so sorting them again in Node takes about one comparison per row.
 *
 * A row is counted `exact` only when these plain counts are what the core's fold gives: no two of its stored
 * trials share an event id or a (run, attempt number) slot (the fold keeps one attempt per slot, the first
 * folded; unmerged copies of one event are such trials too), and every counted attempt that answered checks
 * answered the same names in the same order (so the row's check order is any one's). The others are
 * summarized by the core from their trials (`storeReport.ts`): the same numbers either way. Slots and event ids
 * are counted by their 64-bit hashes: a collision can only make an exact row look inexact (folded: the same
 * numbers, more slowly), never the other way.
 */
export type RowCountsScope = {
  suite: string;
  dataset_version: string;
  /** Only these agent versions (empty: all). */
  versions?: readonly string[];
  /** @default false */
  ungradedAsFailure?: boolean;
  /** @default DEFAULT_MIN_ATTEMPTS */
  minAttempts?: number;
};

export type CountedRow = {
  row_id: string;
  /** False when only the core's fold can count this row (see above); the other fields are then not to be used. */
  exact: boolean;
  /** The planned (non-confirmation) attempts, as the report reads a row. */
  planned: ReportRow;
  /** How many planned attempts (what `plannedAttempts` counts). */
  planned_attempts: number;
  /** Every attempt, and their class (at the scope's minimum attempts). */
  all: { n: number; c: number; ungraded: number; class: StabilityClass };
  /** The attempts of confirmation runs. */
  confirmation: { attempts: number; n: number; c: number };
};

/**
 * The answer line's columns, from a row's aggregates (`ROW_COUNTS_SQL`). The row states' lines are the same
 * formulas over one row's attempt records, written into `row_state` by migration 18 (schema/countsColumns.ts,
 * frozen with the migration): a change here needs new row_state columns, and rowCountsFromState.int, which compares
 * both answers, fails until they agree.
 */
const COUNTS_COLUMNS = `       cnt = slots AND cnt = events AND seqs <= 1 AS exact,
       pl, n, c, u, if(outs < 2, -1, toInt8(douts > 1)) AS od, f,
       arrayMap(name -> (name, multiIf(
           checked * countEqual(first_names, name) < 2, 0,
           arrayCount(p -> p.1 = name, pairs) > 1, 2,
           1)), arrayDistinct(first_names)) AS k,
       an, ac, au, m, mn, mc`;

export const ROW_COUNTS_SQL = `
WITH startsWith(lower(run_id), 'confirm') AS marked,
     passed IS NOT NULL OR {ungraded_as_failure:Bool} AS counted,
     ifNull(passed, false) AS pass,
     NOT marked AND counted AS pc,
     arrayMap(ch -> ch.name, checks) AS names
SELECT v, r,
${COUNTS_COLUMNS}
FROM (
  SELECT agent_version AS v, row_id AS r,
         count() AS cnt,
         uniqExact(cityHash64(run_id, attempt)) AS slots,
         uniqExact(cityHash64(event_id)) AS events,
         toUInt32(countIf(NOT marked)) AS pl,
         toUInt32(countIf(pc)) AS n,
         toUInt32(countIf(NOT marked AND pass)) AS c,
         toUInt32(countIf(NOT marked AND passed IS NULL)) AS u,
         countIf(pc AND output IS NOT NULL) AS outs,
         uniqExactIf(cityHash64(output), pc AND output IS NOT NULL) AS douts,
         toUInt32(countIf(NOT marked AND notEmpty(forbidden_actions))) AS f,
         countIf(pc AND notEmpty(checks)) AS checked,
         uniqExactIf(names, pc AND notEmpty(checks)) AS seqs,
         anyIf(names, pc AND notEmpty(checks)) AS first_names,
         groupUniqArrayArrayIf(arrayMap(ch -> (ch.name, ch.answer), checks), pc) AS pairs,
         toUInt32(countIf(counted)) AS an,
         toUInt32(countIf(pass)) AS ac,
         toUInt32(countIf(passed IS NULL)) AS au,
         toUInt32(countIf(marked)) AS m,
         toUInt32(countIf(marked AND counted)) AS mn,
         toUInt32(countIf(marked AND pass)) AS mc
  FROM trials
  WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
    AND (empty({versions:Array(String)}) OR has({versions:Array(String)}, agent_version))
    AND ${NOT_RETRACTED}
  GROUP BY agent_version, row_id
)
ORDER BY length(r), r`;

/**
 * A counts query sent as one line per distinct set of counts (per version), with the ids of its rows: at 1M trials
 * a few hundred lines instead of 200k, and about half of the query's CPU time (1.3 of 2.6 s) was in writing and
 * parsing those 200k lines of 16 columns. Each id comes with its place in its version's (length, id) order (`ps`,
 * from 1: `row_number()` over the version's rows by `length(r), r`, the bytes' order), so every reader gets the
 * rows in the order it got before, each put at its place in Node instead of a merge of the lines' sorted ids (a
 * sort of every row by its UTF-8 bytes: about a third of a cold counts answer's CPU in Node at 1M trials). `extra`:
 * aggregates after the ids (the row-state query's proof sums).
 */
const grouped = (inner: string, extra = ''): string => `
SELECT v, exact, pl, n, c, u, od, f, k, an, ac, au, m, mn, mc,
       arrayMap(x -> x.1, groupArray((r, p))) AS rs, arrayMap(x -> x.2, groupArray((r, p))) AS ps${extra}
FROM (SELECT *, toUInt32(row_number() OVER (PARTITION BY v ORDER BY length(r), r)) AS p FROM (${inner}))
GROUP BY v, exact, pl, n, c, u, od, f, k, an, ac, au, m, mn, mc`;

/** `ROW_COUNTS_SQL` grouped: the counts from every trial. */
export const ROW_COUNTS_GROUPED_SQL = grouped(ROW_COUNTS_SQL.replace('ORDER BY length(r), r', ''));

const SCOPE = `suite = {suite:String} AND dataset_version = {dataset_version:String}
    AND (empty({versions:Array(String)}) OR has({versions:Array(String)}, agent_version))`;

/**
 * The same counts as `ROW_COUNTS_SQL`, from the processors' row state (`row_state` FINAL: one row per row and
 * version) instead of a GROUP BY over every trial: each row's counts line as the store computed it when the row
 * state was inserted (`counts_graded`, `counts_ungraded_failed`: MATERIALIZED columns over its attempt records,
 * sinks/clickhouse/schema/countsColumns.ts, the same conditions as the trials query's: planned and confirmation
 * attempts, counted, outputs by the core's output hash instead of cityHash64 of the text, check names in order and
 * answers, forbidden actions, slots and event ids by the same hashes), so a request reads plain columns, not the
 * attempt records. `h`: the sum of the row's attempt fingerprints and `cnt` its attempts, for the proof
 * (`countRows`). A row whose every attempt was retracted holds none, and is no row (as in the trials).
 */
export const STATE_COUNTS_SQL = `
SELECT v, r, t.exact AS exact, t.pl AS pl, t.n AS n, t.c AS c, t.u AS u, t.od AS od, t.f AS f, t.k AS k,
       t.an AS an, t.ac AS ac, t.au AS au, t.m AS m, t.mn AS mn, t.mc AS mc, t.cnt AS cnt, t.h AS h
FROM (
  SELECT agent_version AS v, row_id AS r,
         if({ungraded_as_failure:Bool}, counts_ungraded_failed, counts_graded) AS t
  FROM row_state FINAL
  WHERE ${SCOPE}
)
WHERE cnt > 0`;

/** `STATE_COUNTS_SQL` grouped, each line with its rows' attempts and the sum of their fingerprints (mod 2^64). */
export const STATE_COUNTS_GROUPED_SQL = grouped(STATE_COUNTS_SQL, ', toString(sum(h)) AS hs, sum(cnt) AS cs');

/**
 * The other side of the proof: per version, the scope's stored trials (not retracted, every copy) and the sum of
 * their fingerprints (`TRIAL_FINGERPRINT`, the row states' formula over a trial's columns: schema/countsColumns.ts),
 * read in one pass without a GROUP BY per row (about the bare per-row GROUP BY's cost).
 */
export const TRIALS_PROOF_SQL = `
SELECT agent_version AS v, count() AS cnt,
       toString(sum(${TRIAL_FINGERPRINT})) AS h
FROM trials
WHERE ${SCOPE} AND ${NOT_RETRACTED}
GROUP BY v`;

/**
 * `TRIALS_PROOF_SQL` from the fingerprint each trial holds (migration 19, `STORED_TRIAL_FINGERPRINT`: the same
 * value), one column read instead of output, checks and forbidden actions hashed per trial: at 1M trials 0.27 →
 * 0.07 s CPU. Only when `FINGERPRINTS_STORED_SQL` says every part holds the column.
 */
export const TRIALS_PROOF_STORED_SQL = TRIALS_PROOF_SQL.replace(`sum(${TRIAL_FINGERPRINT})`, 'sum(fingerprint)');

/**
 * Whether every active part of this database's `trials` holds the fingerprint column on disk (1) or not (0): a
 * part stored before migration 19 computes it when read, and chDB computed another sum that way under the proof
 * query's filters, so such a store's proof hashes the columns in the query (`TRIALS_PROOF_SQL`) until every part
 * holds the column (merges write it; a settled month's single part is not merged again: docs/performance.md). One
 * scan of `system.parts_columns` (every part lists its columns there), grouped by part: the parts and those holding
 * the column are counted in the same pass, so an insert cannot slip between two counts. A cluster's `trials` is a
 * Distributed table with no parts of its own: 0.
 */
export const FINGERPRINTS_STORED_SQL = `
SELECT count() AS parts, countIf(has) AS stored, parts > 0 AND stored = parts AS whole
FROM (
  SELECT name, max(column = 'fingerprint') AS has
  FROM system.parts_columns
  WHERE database = currentDatabase() AND table = 'trials' AND active
  GROUP BY name
)`;

/** The grouped queries' columns, in order (JSONCompactEachRow: one array per line); the row-state query adds two. */
const COLUMNS = [
  'v',
  'exact',
  'pl',
  'n',
  'c',
  'u',
  'od',
  'f',
  'k',
  'an',
  'ac',
  'au',
  'm',
  'mn',
  'mc',
  'rs',
  'ps',
  'hs',
  'cs',
];
const NUMBERS = [2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14];

const bad = (line: number, column: number, value: unknown): Error =>
  new Error(
    `rowCounts: line ${line + 1} of the answer, column ${COLUMNS[column] ?? column}: unexpected ${JSON.stringify(value)}`,
  );

/**
 * Checks one line of the answer by hand (200k lines at 1M trials: a schema per line cost seconds): every field
 * of the type it must have, or an error naming the line and the column. `proof`: the row-state query's line, with
 * its fingerprint sum (a UInt64 as text) and attempts.
 */
const checkLine = (l: unknown, i: number, proof: boolean): Line => {
  if (!Array.isArray(l) || l.length !== (proof ? 19 : 17)) throw bad(i, -1, l);
  if (typeof l[0] !== 'string') throw bad(i, 0, l[0]);
  if (typeof l[1] !== 'boolean' && typeof l[1] !== 'number') throw bad(i, 1, l[1]);
  for (const j of NUMBERS) if (typeof l[j] !== 'number') throw bad(i, j, l[j]);
  const k: unknown = l[8];
  if (!Array.isArray(k)) throw bad(i, 8, k);
  for (const t of k as unknown[])
    if (!Array.isArray(t) || t.length !== 2 || typeof t[0] !== 'string' || typeof t[1] !== 'number') throw bad(i, 8, t);
  const rs: unknown = l[15];
  if (!Array.isArray(rs)) throw bad(i, 15, rs);
  for (const r of rs as unknown[]) if (typeof r !== 'string') throw bad(i, 15, r);
  const ps: unknown = l[16];
  if (!Array.isArray(ps) || ps.length !== rs.length) throw bad(i, 16, ps);
  for (const p of ps as unknown[]) if (typeof p !== 'number' || !Number.isInteger(p) || p < 1) throw bad(i, 16, p);
  if (proof && (typeof l[17] !== 'string' || !/^\d+$/.test(l[17]))) throw bad(i, 17, l[17]);
  if (proof && typeof l[18] !== 'number' && (typeof l[18] !== 'string' || !/^\d+$/.test(l[18])))
    throw bad(i, 18, l[18]);
  return l as Line;
};

type Line = [
  v: string,
  exact: boolean | number,
  pl: number,
  n: number,
  c: number,
  u: number,
  od: number,
  f: number,
  k: [string, number][],
  an: number,
  ac: number,
  au: number,
  m: number,
  mn: number,
  mc: number,
  rs: string[],
  ps: number[],
  hs?: string,
  cs?: number | string,
];

/** Where a counts answer came from: the processors' row state (proved whole), or every trial. */
export type CountsFrom = 'row_state' | 'trials';

const paramsOf = (scope: RowCountsScope) => ({
  suite: scope.suite,
  dataset_version: scope.dataset_version,
  versions: scope.versions ?? [],
  ungraded_as_failure: scope.ungradedAsFailure ?? false,
});

const linesOf = async (client: Querier, query: string, scope: RowCountsScope, proof: boolean): Promise<Line[]> => {
  const rs = await client.query({ query, query_params: paramsOf(scope), format: 'JSONCompactEachRow' });
  const lines = await rs.json<unknown>();
  return lines.map((l, i) => checkLine(l, i, proof));
};

const MOD = 1n << 64n;
/** Per version: attempts and the sum of their fingerprints (mod 2^64), as text to compare. */
export type Tally = Map<string, { cnt: bigint; h: bigint }>;
export const add = (t: Tally, v: string, cnt: bigint, h: bigint): void => {
  const was = t.get(v) ?? { cnt: 0n, h: 0n };
  t.set(v, { cnt: was.cnt + cnt, h: (was.h + h) % MOD });
};
export const sameTally = (a: Tally, b: Tally): boolean => {
  for (const v of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(v);
    const y = b.get(v);
    if (!x || !y || x.cnt !== y.cnt || x.h !== y.h) return false;
  }
  return true;
};

/** Whether the trials' side of the proof can sum the stored fingerprints (`FINGERPRINTS_STORED_SQL`). */
export const fingerprintsStored = async (client: Querier): Promise<boolean> => {
  try {
    const rs = await client.query({ query: FINGERPRINTS_STORED_SQL, format: 'JSONEachRow' });
    const [line] = await rs.json<{ whole: unknown }>();
    return line !== undefined && (line.whole === true || line.whole === 1 || line.whole === '1');
  } catch {
    // a store that does not let us read its system tables: the proof hashes the columns, as before migration 19
    return false;
  }
};

/** The trials' side of the proof (`TRIALS_PROOF_STORED_SQL` when every part holds the fingerprints, else `TRIALS_PROOF_SQL`). */
const trialsTally = async (client: Querier, scope: RowCountsScope): Promise<Tally> => {
  const query = (await fingerprintsStored(client)) ? TRIALS_PROOF_STORED_SQL : TRIALS_PROOF_SQL;
  const rs = await client.query({ query, query_params: paramsOf(scope), format: 'JSONEachRow' });
  const t: Tally = new Map();
  for (const l of await rs.json<{ v: unknown; cnt: unknown; h: unknown }>()) {
    if (typeof l.v !== 'string' || !/^\d+$/.test(String(l.cnt)) || typeof l.h !== 'string' || !/^\d+$/.test(l.h))
      throw new Error(`rowCounts: unexpected proof line ${JSON.stringify(l)}`);
    add(t, l.v, BigInt(String(l.cnt)), BigInt(l.h));
  }
  return t;
};

/**
 * The counted rows of each agent version in the scope, by version (each version's rows in (length, id) order),
 * and where they came from.
 *
 * From the processors' row state when it is proved to hold exactly the scope's stored trials, else from every
 * trial (`ROW_COUNTS_SQL`): the same answer either way. The row state lags the trials while a processors' unit is
 * half written (its trials before its row states), after a crash in between, or on a store written without
 * the processors; it differs from them where a row state was written by an older passk (no forbidden actions).
 * The proof, per version: the row states' attempts and the trials (every copy, not retracted) are as many, and the
 * sums (mod 2^64) of their fingerprints (row, event id, slot, verdict, whether an output, checks, forbidden actions)
 * are equal. The processors write a trial only once it is folded, and a row state's attempts are trials
 * the store holds (written before it), so a lagging row state has fewer attempts and a copy of a trial
 * makes the trials more; a missing attempt and an extra one in the same version would have to have equal
 * fingerprints (64-bit hashes: 2^-64) to pass. Both sides are read in about one pass each: the row state's
 * counts carry their sums, and the trials' side is one aggregate per version, not a GROUP BY per row.
 */
export const countRows = async (
  client: Querier,
  scope: RowCountsScope,
): Promise<{ from: CountsFrom; rows: Map<string, CountedRow[]> }> => {
  const [state, trials] = await Promise.all([
    linesOf(client, STATE_COUNTS_GROUPED_SQL, scope, true),
    trialsTally(client, scope),
  ]);
  const fromState: Tally = new Map();
  for (const l of state) add(fromState, l[0], BigInt(l[18]!), BigInt(l[17]!));
  if (sameTally(fromState, trials)) return { from: 'row_state', rows: placeLines(state, scope) };
  return { from: 'trials', rows: placeLines(await linesOf(client, ROW_COUNTS_GROUPED_SQL, scope, false), scope) };
};

/** The counted rows of each agent version in the scope, by version (each version's rows in (length, id) order). */
export const rowCounts = async (client: Querier, scope: RowCountsScope): Promise<Map<string, CountedRow[]>> =>
  (await countRows(client, scope)).rows;

/** Every trial's counts (`ROW_COUNTS_SQL`), whatever the row state holds: what the row state's must equal. */
export const rowCountsFromTrials = async (client: Querier, scope: RowCountsScope): Promise<Map<string, CountedRow[]>> =>
  placeLines(await linesOf(client, ROW_COUNTS_GROUPED_SQL, scope, false), scope);

/**
 * The lines' rows, each version's in (length, id) order: every id at the place the query gave it (`ps`). The places
 * of a version must be 1…its rows, each once; anything else is an error, never a row left out or counted twice.
 */
const placeLines = (lines: readonly Line[], scope: RowCountsScope): Map<string, CountedRow[]> => {
  const minAttempts = scope.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  const sizes = new Map<string, number>();
  for (const l of lines) sizes.set(l[0], (sizes.get(l[0]) ?? 0) + l[15].length);
  const placed = new Map<string, (CountedRow | undefined)[]>();
  for (const [v, size] of sizes) placed.set(v, new Array<CountedRow | undefined>(size));
  for (let i = 0; i < lines.length; i++) {
    const [v, exact, pl, n, c, u, od, f, k, an, ac, au, m, mn, mc, ids, places] = lines[i]!;
    const rows = placed.get(v)!;
    const cls = classOf(n, c, minAttempts);
    // one tally list and one record of every attempt and of the confirmation attempts per line, shared by its
    // rows (their readers build their own records from them, and never change them)
    const checks: CheckTally[] = k.map(([name, state]) => ({ name, repeated: state > 0, flips: state === 2 }));
    const all = { n: an, c: ac, ungraded: au, class: classOf(an, ac, minAttempts) };
    const confirmation = { attempts: m, n: mn, c: mc };
    const isExact = Boolean(exact);
    const outputsDiffer = od < 0 ? null : od === 1;
    for (let j = 0; j < ids.length; j++) {
      const r = ids[j]!;
      const at = places[j]! - 1;
      if (at >= rows.length || rows[at] !== undefined) throw bad(i, 16, places[j]);
      rows[at] = {
        row_id: r,
        exact: isExact,
        planned: {
          row_id: r,
          n,
          c,
          ungraded: u,
          class: cls,
          outputs_differ: outputsDiffer,
          forbidden_trials: f,
          checks,
        },
        planned_attempts: pl,
        all,
        confirmation,
      };
    }
  }
  const out = new Map<string, CountedRow[]>();
  // every place filled: as many ids as places, none twice, none out of range
  for (const v of [...placed.keys()].sort()) out.set(v, placed.get(v) as CountedRow[]);
  return out;
};
