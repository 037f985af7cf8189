import { col } from './table.ts';

/**
 * A row state's per-row counts, computed by the store when the row state is inserted (MATERIALIZED columns of
 * `row_state`, migration 18) from its attempt records: what the overview's and the comparison's counts query
 * (sinks/clickhouse/queries/rowCounts.ts, `STATE_COUNTS_SQL`) computed for every row at every request, the check
 * tallies included. One tuple per value of the ungraded-as-failure option (the only option the counts depend on;
 * the class's minimum attempts is applied in Node). Each holds the counts line's columns (`COUNTS_COLUMNS`) and the
 * row's attempts and fingerprint sum for the proof.
 *
 * The text is part of migration 18 (its checksum): it never changes. A change to what the counts mean comes as a
 * new migration with new columns; rowCountsFromState.int compares these counts with the trials' on every case it
 * builds, so a drift between the two shows there.
 */

/**
 * One stored attempt's fingerprint, the same on both sides of the proof (`countRows`): what the counts read of it
 * (row, event id, slot, verdict, whether it has an output, check names and answers, forbidden actions). A verdict
 * is 0, 1 or 2 (none): a NULL argument would make the hash NULL.
 */
const fingerprint = (
  e: string,
  run: string,
  attempt: string,
  passed: string,
  outNull: string,
  checks: string,
  forbidden: string,
) => `cityHash64(row_id, ${e}, ${run}, ${attempt}, ifNull(toUInt8(${passed}), 2), ${outNull}, ${checks}, ${forbidden})`;

/** The counts tuple's type (`ROW_STATE_COUNTS_TYPE`): the names the counts query reads. */
export const ROW_STATE_COUNTS_TYPE =
  'Tuple(exact Bool, pl UInt32, n UInt32, c UInt32, u UInt32, od Int8, f UInt32, k Array(Tuple(String, UInt8)), ' +
  'an UInt32, ac UInt32, au UInt32, m UInt32, mn UInt32, mc UInt32, cnt UInt32, h UInt64)';

const countsExpression = (ungradedAsFailure: boolean): string => {
  const field = (f: string) => `arrayMap(r -> r.${f}, attempt_records)`;
  const R = field('run_id');
  const PA = field('passed');
  const OH = field('output_hash');
  const CH = field('checks');
  const FA = field('forbidden_actions');
  const EV = field('event_id');
  const AT = field('attempt');
  const cnt = 'length(attempt_records)';
  const mk = `arrayMap(x -> startsWith(lower(x), 'confirm'), ${R})`;
  const cn = `arrayMap(p -> p IS NOT NULL OR ${ungradedAsFailure}, ${PA})`;
  const ps = `arrayMap(p -> ifNull(p, false), ${PA})`;
  const pc = `arrayMap((x, q) -> NOT x AND q, ${mk}, ${cn})`;
  const slots = `length(arrayDistinct(arrayMap((x, a) -> cityHash64(x, a), ${R}, ${AT})))`;
  const events = `length(arrayDistinct(arrayMap(e -> cityHash64(e), ${EV})))`;
  const O = `arrayFilter((o, q) -> q AND o IS NOT NULL, ${OH}, ${pc})`;
  const CN = `arrayMap(ch -> arrayMap(x -> x.1, ch), arrayFilter((ch, q) -> q AND notEmpty(ch), ${CH}, ${pc}))`;
  const m = `arrayCount(${mk})`;
  const checked = `length(${CN})`;
  const firstNames = `${CN}[1]`;
  const pairs = `arrayDistinct(arrayFlatten(arrayFilter((ch, q) -> q, ${CH}, ${pc})))`;
  const h = `arraySum(arrayMap((e, x, a, p, o, ch, fa) -> ${fingerprint('e', 'x', 'a', 'p', 'isNull(o)', 'ch', 'fa')}, ${EV}, ${R}, ${AT}, ${PA}, ${OH}, ${CH}, ${FA}))`;
  return `CAST(tuple(
    ${cnt} = ${slots} AND ${cnt} = ${events} AND length(arrayDistinct(${CN})) <= 1,
    ${cnt} - ${m},
    arrayCount(${pc}),
    arrayCount((x, p) -> NOT x AND p, ${mk}, ${ps}),
    arrayCount((x, p) -> NOT x AND p IS NULL, ${mk}, ${PA}),
    if(length(${O}) < 2, -1, toInt8(length(arrayDistinct(${O})) > 1)),
    arrayCount((x, fa) -> NOT x AND notEmpty(fa), ${mk}, ${FA}),
    arrayMap(name -> (name, multiIf(
        ${checked} * countEqual(${firstNames}, name) < 2, 0,
        arrayCount(p -> p.1 = name, ${pairs}) > 1, 2,
        1)), arrayDistinct(${firstNames})),
    arrayCount(${cn}),
    arrayCount(${ps}),
    arrayCount(p -> p IS NULL, ${PA}),
    ${m},
    arrayCount((x, q) -> x AND q, ${mk}, ${cn}),
    arrayCount((x, p) -> x AND p, ${mk}, ${ps}),
    ${cnt},
    ${h}), '${ROW_STATE_COUNTS_TYPE}')`;
};

/** A stored trial's fingerprint (`trials`' columns): the trials' side of the proof (rowCounts.ts, `TRIALS_PROOF_SQL`). */
export const TRIAL_FINGERPRINT = fingerprint(
  'event_id',
  'run_id',
  'attempt',
  'passed',
  'isNull(output)',
  'arrayMap(ch -> (ch.name, ch.answer), checks)',
  "CAST(forbidden_actions, 'Array(String)')",
);

/**
 * Columns migration 18 adds to `row_state`: the row's counts with ungraded attempts left out (`counts_graded`, the
 * default) and counted as failures (`counts_ungraded_failed`). A row state stored before reads them computed from
 * its attempt records (as every MATERIALIZED column added later), until a merge writes them.
 */
export const ROW_STATE_V18_COLUMNS = [
  col('counts_graded', ROW_STATE_COUNTS_TYPE, {
    materialized: countsExpression(false),
    codec: 'ZSTD(3)',
    comment:
      "the row's counts line (rowCounts.ts), ungraded attempts not counted; cnt, h: attempts and fingerprint sum",
  }),
  col('counts_ungraded_failed', ROW_STATE_COUNTS_TYPE, {
    materialized: countsExpression(true),
    codec: 'ZSTD(3)',
    comment: "the row's counts line (rowCounts.ts), ungraded attempts counted as failures",
  }),
] as const;

/**
 * Each stored trial's fingerprint, written by the store on insert (migration 19): the same value as
 * `TRIAL_FINGERPRINT` (the check pairs zipped from the subcolumns: a lambda over `checks` in a MATERIALIZED
 * expression made chDB's merges of trials stored before the column fail, "Missing columns: 'ch.name'"), so the
 * trials' side of the proof sums one column instead of hashing output, checks and forbidden actions per trial.
 * The proof reads the column only when every active part of `trials` holds it (`FINGERPRINTS_STORED_SQL`): a part
 * stored before migration 19 computes it when read, and chDB computed a different sum that way under the proof
 * query. Frozen with the migration, as the counts columns above.
 */
export const STORED_TRIAL_FINGERPRINT = fingerprint(
  'event_id',
  'run_id',
  'attempt',
  'passed',
  'isNull(output)',
  'arrayZip(checks.name, checks.answer)',
  "CAST(forbidden_actions, 'Array(String)')",
);

/** The column migration 19 adds to `trials`: its fingerprint (`STORED_TRIAL_FINGERPRINT`). */
export const TRIALS_V19_COLUMNS = [
  col('fingerprint', 'UInt64', {
    materialized: STORED_TRIAL_FINGERPRINT,
    comment: "the trial's fingerprint for the row-state proof (rowCounts.ts): TRIAL_FINGERPRINT, stored on insert",
  }),
] as const;
