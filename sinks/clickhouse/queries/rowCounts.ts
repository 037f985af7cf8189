import { classOf, DEFAULT_MIN_ATTEMPTS } from '../../../processors/core/classify.ts';
import type { CheckTally, ReportRow } from '../../../processors/core/rowSummary.ts';
import { NOT_RETRACTED } from './retracted.ts';
import type { Querier } from './select.ts';

/**
 * Per-row counts of one suite and dataset version, one line per (agent version, row), counted by one GROUP BY in
 * ClickHouse (chDB or a server: the same SQL), so the report and the comparison are built from them without
 * moving the trials into Node. The counts follow the core's fold and summary (processors/core/rowSummary.ts):
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
  /** Every attempt. */
  all: { n: number; c: number; ungraded: number };
  /** The attempts of confirmation runs. */
  confirmation: { attempts: number; n: number; c: number };
};

export const ROW_COUNTS_SQL = `
WITH startsWith(lower(run_id), 'confirm') AS marked,
     passed IS NOT NULL OR {ungraded_as_failure:Bool} AS counted,
     ifNull(passed, false) AS pass,
     NOT marked AND counted AS pc,
     arrayMap(ch -> ch.name, checks) AS names
SELECT v, r,
       cnt = slots AND cnt = events AND seqs <= 1 AS exact,
       pl, n, c, u, if(outs < 2, -1, toInt8(douts > 1)) AS od, f,
       arrayMap(name -> (name, multiIf(
           checked * countEqual(first_names, name) < 2, 0,
           arrayCount(p -> p.1 = name, pairs) > 1, 2,
           1)), arrayDistinct(first_names)) AS k,
       an, ac, au, m, mn, mc
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
 * `ROW_COUNTS_SQL` sent as one line per distinct set of counts (per version), with the ids of its rows, in (length,
 * id) order: at 1M trials a few hundred lines instead of 200k, and about half of the query's CPU time (1.3 of 2.6 s)
 * was in writing and parsing those 200k lines of 16 columns. The rows are put back in (length, id) order per
 * version here (`byLengthThenBytes`), so every reader gets them in the order it got before.
 */
export const ROW_COUNTS_GROUPED_SQL = `
SELECT v, exact, pl, n, c, u, od, f, k, an, ac, au, m, mn, mc, arraySort(x -> (length(x), x), groupArray(r)) AS rs
FROM (${ROW_COUNTS_SQL.replace('ORDER BY length(r), r', '')})
GROUP BY v, exact, pl, n, c, u, od, f, k, an, ac, au, m, mn, mc`;

/** The grouped query's columns, in order (JSONCompactEachRow: one array per line). */
const COLUMNS = ['v', 'exact', 'pl', 'n', 'c', 'u', 'od', 'f', 'k', 'an', 'ac', 'au', 'm', 'mn', 'mc', 'rs'] as const;
const NUMBERS = [2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14];

const bad = (line: number, column: number, value: unknown): Error =>
  new Error(
    `rowCounts: line ${line + 1} of the answer, column ${COLUMNS[column] ?? column}: unexpected ${JSON.stringify(value)}`,
  );

/**
 * Checks one line of the answer by hand (200k lines at 1M trials: a schema per line cost seconds): every field
 * of the type it must have, or an error naming the line and the column.
 */
const checkLine = (l: unknown, i: number): Line => {
  if (!Array.isArray(l) || l.length !== COLUMNS.length) throw bad(i, -1, l);
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
];

/**
 * ClickHouse's order of `ROW_COUNTS_SQL`'s ORDER BY length(r), r: length in UTF-8 bytes, then the bytes. An ASCII id
 * (as long as its bytes) compares by its code units, which is the same; others by their UTF-8 bytes.
 */
type Placed = { row: CountedRow; bytes: number; ascii: boolean };
const byLengthThenBytes = (a: Placed, b: Placed): number => {
  if (a.bytes !== b.bytes) return a.bytes - b.bytes;
  const x = a.row.row_id;
  const y = b.row.row_id;
  if (a.ascii && b.ascii) return x < y ? -1 : x > y ? 1 : 0;
  return Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8'));
};

/** The counted rows of each agent version in the scope, by version (each version's rows in (length, id) order). */
export const rowCounts = async (client: Querier, scope: RowCountsScope): Promise<Map<string, CountedRow[]>> => {
  const rs = await client.query({
    query: ROW_COUNTS_GROUPED_SQL,
    query_params: {
      suite: scope.suite,
      dataset_version: scope.dataset_version,
      versions: scope.versions ?? [],
      ungraded_as_failure: scope.ungradedAsFailure ?? false,
    },
    format: 'JSONCompactEachRow',
  });
  const lines = await rs.json<unknown>();
  const minAttempts = scope.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  const placed = new Map<string, Placed[]>();
  for (let i = 0; i < lines.length; i++) {
    const [v, exact, pl, n, c, u, od, f, k, an, ac, au, m, mn, mc, ids] = checkLine(lines[i], i);
    let rows = placed.get(v);
    if (!rows) placed.set(v, (rows = []));
    const cls = classOf(n, c, minAttempts);
    for (const r of ids) {
      const bytes = Buffer.byteLength(r, 'utf8');
      const checks: CheckTally[] = k.map(([name, state]) => ({ name, repeated: state > 0, flips: state === 2 }));
      const row: CountedRow = {
        row_id: r,
        exact: Boolean(exact),
        planned: {
          row_id: r,
          n,
          c,
          ungraded: u,
          class: cls,
          outputs_differ: od < 0 ? null : od === 1,
          forbidden_trials: f,
          checks,
        },
        planned_attempts: pl,
        all: { n: an, c: ac, ungraded: au },
        confirmation: { attempts: m, n: mn, c: mc },
      };
      rows.push({ row, bytes, ascii: bytes === r.length });
    }
  }
  const out = new Map<string, CountedRow[]>();
  for (const v of [...placed.keys()].sort()) {
    // each line's ids come sorted: a merge of those runs (TimSort), not a sort of every row
    const rows = placed.get(v)!.sort(byLengthThenBytes);
    out.set(
      v,
      rows.map((p) => p.row),
    );
  }
  return out;
};
