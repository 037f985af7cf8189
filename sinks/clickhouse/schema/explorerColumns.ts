import { TRIAL_FINGERPRINT } from './countsColumns.ts';
import { col } from './table.ts';

/**
 * The Rows view's per-row counts (sinks/clickhouse/queries/explorerCounts.ts), computed by the store when a row
 * state is inserted (migration 20), so `/api/rows` reads one row per (row, version) of `row_state` instead of a
 * GROUP BY over every trial. The attempt records carry the trial's answer; the failure category, latency and cost
 * the view also reads come in `attempt_extras`, one element per attempt record, in the same order (a row state
 * written before migration 20, or by an older passk, has none: `arrayResize` reads them as NULL, and the proof then
 * fails wherever a trial has one, so those counts come from the trials).
 *
 * The text is part of migration 20 (its checksum): it never changes. A change to what the counts mean comes as a
 * new migration with new columns; explorerFromState.int compares both answers on every case it builds.
 */

/** The extras' type: one per attempt record. */
export const ATTEMPT_EXTRAS_TYPE =
  'Array(Tuple(failure_category Nullable(String), latency_ms Nullable(Float64), cost_usd Nullable(Float64)))';

/**
 * The explorer tuple's type: attempts (`cnt`), whether they are one per event and slot (`single`), the distinct
 * check-name sequences of the counted attempts (`seqs`), n and c over every attempt (confirmation runs included),
 * the flipping checks, the distinct failure categories, the two means (NULL: none), and the proof's hash sum (`h`).
 */
export const ROW_STATE_EXPLORER_TYPE =
  'Tuple(cnt UInt32, single Bool, seqs UInt32, n UInt32, c UInt32, flips Array(String), cats Array(String), ' +
  'lat Nullable(Float64), cost Nullable(Float64), h UInt64)';

/**
 * An attempt's explorer fingerprint: its row-state fingerprint (`fp`, a UInt64 expression) hashed with its
 * category, latency and cost, NULLs told apart from values (a NULL argument would make the hash NULL).
 */
const extrasFingerprint = (fp: string, cat: string, lat: string, cost: string): string =>
  `cityHash64(${fp}, isNull(${cat}), ifNull(${cat}, ''), isNull(${lat}), ifNull(${lat}, toFloat64(0)), ` +
  `isNull(${cost}), ifNull(${cost}, toFloat64(0)))`;

/** A stored trial's explorer fingerprint: its fingerprint (`fp`: the stored column or `TRIAL_FINGERPRINT`) and extras. */
export const trialExplorerFingerprint = (stored: boolean): string =>
  extrasFingerprint(
    stored ? 'fingerprint' : TRIAL_FINGERPRINT,
    "CAST(failure_category, 'Nullable(String)')",
    'latency_ms',
    'cost_usd',
  );

const R = 'attempt_records';
const X = `arrayResize(attempt_extras, length(${R}))`;
/** The counted attempts (a verdict), every run's. */
const COUNTED = `arrayFilter(r -> r.passed IS NOT NULL, ${R})`;
/** The check-name sequences of the counted attempts that answered checks. */
const CN = `arrayMap(r -> arrayMap(x -> x.1, r.checks), arrayFilter(r -> notEmpty(r.checks), ${COUNTED}))`;
const PAIRS = `arrayDistinct(arrayFlatten(arrayMap(r -> r.checks, ${COUNTED})))`;
/** The mean of one extra (its index in the extras tuple), summed in (occurred_at, event_id) order as the explorer does. */
const mean = (i: number): string => {
  const values = `arrayMap(y -> y.3, arraySort(y -> (y.1, y.2), arrayMap(z -> (z.1, z.2, assumeNotNull(z.3)),
      arrayFilter(z -> z.3 IS NOT NULL, arrayMap((r, x) -> (r.occurred_at, r.event_id, x.${i}), ${R}, ${X})))))`;
  return `if(empty(${values}), NULL, arrayFold((acc, v) -> acc + v, ${values}, toFloat64(0)) / length(${values}))`;
};
/** The row-state fingerprint of attempt record `r` (countsColumns.ts's, the same value as the trials'). */
const stateFingerprint = `cityHash64(row_id, r.event_id, r.run_id, r.attempt, ifNull(toUInt8(r.passed), 2), isNull(r.output_hash), r.checks, r.forbidden_actions)`;

const explorerExpression = `CAST(tuple(
    length(${R}),
    length(${R}) = length(arrayDistinct(arrayMap(r -> cityHash64(r.run_id, r.attempt), ${R})))
      AND length(${R}) = length(arrayDistinct(arrayMap(r -> cityHash64(r.event_id), ${R}))),
    length(arrayDistinct(${CN})),
    length(${COUNTED}),
    arrayCount(r -> ifNull(r.passed, false), ${R}),
    arrayFilter(name -> length(${CN}) * countEqual((${CN})[1], name) >= 2 AND arrayCount(p -> p.1 = name, ${PAIRS}) > 1,
      arrayDistinct((${CN})[1])),
    arrayDistinct(arrayMap(x -> assumeNotNull(x.1), arrayFilter(x -> x.1 IS NOT NULL, ${X}))),
    ${mean(2)},
    ${mean(3)},
    arraySum(arrayMap((r, x) -> ${extrasFingerprint(stateFingerprint, 'x.1', 'x.2', 'x.3')}, ${R}, ${X}))
  ), '${ROW_STATE_EXPLORER_TYPE}')`;

/**
 * Columns migration 20 adds to `row_state`: each attempt's extras (written by passk from its attempt records) and
 * the row's explorer counts computed from them on insert.
 */
export const ROW_STATE_V20_COLUMNS = [
  col('attempt_extras', ATTEMPT_EXTRAS_TYPE, {
    codec: 'ZSTD(3)',
    // typed: a part stored before the column read it as Array(Nothing) otherwise, which the explorer's arrayFold refused
    default: `CAST([], '${ATTEMPT_EXTRAS_TYPE}')`,
    comment: "each attempt record's failure category, latency and cost, in the same order (empty: not carried)",
  }),
  col('explorer', ROW_STATE_EXPLORER_TYPE, {
    materialized: explorerExpression,
    codec: 'ZSTD(3)',
    comment: "the row's Rows-view counts (explorerCounts.ts); h: the proof's fingerprint sum",
  }),
] as const;
