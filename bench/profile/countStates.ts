/**
 * Prototype for issue #32, not landed (docs/performance.md, "Counts kept by the store, measured"): the per-row
 * counts merged from aggregate states an `AggregatingMergeTree` would keep per (suite, dataset version, agent version,
 * row, run, graded), against today's counts query over every trial (`rowCounts`) and the bare `GROUP BY`, on the
 * store bench/profile/dashSplit.ts generates (/tmp/dashsplit-ROWS). Two layouts of the states, each filled here from
 * `trials FINAL` (as a migration's backfill would) and merged to one row per key (`OPTIMIZE … FINAL`, the best case):
 * - **sets**: `uniqExact` states of the slot, event-id and output hashes and of the check-name lists, and a
 *   `groupUniqArrayArray` of the (check, answer) pairs: the same aggregates as the counts query;
 * - **min/max**: only the slots and event ids as sets; outputs, name lists and each check position's answer hash as
 *   min and max (two differ iff min ≠ max; a row is exact only with one name list, so positions line up).
 * Every answer is checked equal to the counts query's. CPU time of the process (chDB runs in it), median of N:
 * `node --import tsx bench/profile/countStates.ts 20000 7`.
 */
import { loadavg } from 'node:os';
import { openClickHouse } from '../../sinks/clickhouse/index.ts';
import { NOT_RETRACTED } from '../../sinks/clickhouse/queries/retracted.ts';
import { ROW_COUNTS_SQL } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { BARE_GROUP_BY_SQL } from '../dashboardKit.ts';

const rows = Number(process.argv[2] ?? 20000);
const samples = Number(process.argv[3] ?? 7);
const store = await openClickHouse({ kind: 'embedded', path: `/tmp/dashsplit-${rows}`, database: 'passk' });
const c = store.client;
const run = (query: string, params: Record<string, unknown> = {}) =>
  c.query({ query, query_params: params, format: 'JSONCompactEachRow' }).then((r) => r.text());
const timed = async (what: string, f: () => Promise<unknown>) => {
  const t = performance.now();
  await f();
  console.log(`${what}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
};

const KEYS = 'suite, dataset_version, agent_version, row_id, run_id, graded';
const KEY_COLUMNS = `suite LowCardinality(String), dataset_version LowCardinality(String),
  agent_version LowCardinality(String), row_id String, run_id String, graded Bool`;
const ENGINE = `ENGINE = AggregatingMergeTree ORDER BY (${KEYS})`;
const SETS_TABLE = `CREATE TABLE proto_counts_sets (${KEY_COLUMNS},
  trials SimpleAggregateFunction(sum, UInt64),
  slots AggregateFunction(uniqExact, UInt64),
  events AggregateFunction(uniqExact, UInt64),
  passes SimpleAggregateFunction(sum, UInt64),
  forbidden SimpleAggregateFunction(sum, UInt64),
  outputs SimpleAggregateFunction(sum, UInt64),
  output_hashes AggregateFunction(uniqExact, UInt64),
  checked SimpleAggregateFunction(sum, UInt64),
  name_lists AggregateFunction(uniqExact, Array(String)),
  names SimpleAggregateFunction(max, Array(String)),
  answers AggregateFunction(groupUniqArrayArray, Array(Tuple(String, String)))
) ${ENGINE}`;
const SETS_FILL = `INSERT INTO proto_counts_sets
SELECT ${KEYS.replace('graded', 'passed IS NOT NULL AS graded')},
  count(), uniqExactState(cityHash64(run_id, attempt)), uniqExactState(cityHash64(event_id)),
  countIf(ifNull(passed, false)), countIf(notEmpty(forbidden_actions)), countIf(output IS NOT NULL),
  uniqExactStateIf(cityHash64(output), output IS NOT NULL), countIf(notEmpty(checks)),
  uniqExactStateIf(arrayMap(ch -> ch.name, checks), notEmpty(checks)), max(arrayMap(ch -> ch.name, checks)),
  groupUniqArrayArrayState(arrayMap(ch -> (ch.name, ch.answer), checks))
FROM trials FINAL GROUP BY ${KEYS}`;
const MINMAX_TABLE = `CREATE TABLE proto_counts_minmax (${KEY_COLUMNS},
  trials SimpleAggregateFunction(sum, UInt64),
  slots AggregateFunction(uniqExact, UInt64),
  events AggregateFunction(uniqExact, UInt64),
  passes SimpleAggregateFunction(sum, UInt64),
  forbidden SimpleAggregateFunction(sum, UInt64),
  outputs SimpleAggregateFunction(sum, UInt64),
  output_min SimpleAggregateFunction(min, UInt64),
  output_max SimpleAggregateFunction(max, UInt64),
  checked SimpleAggregateFunction(sum, UInt64),
  names_min SimpleAggregateFunction(min, Array(String)),
  names_max SimpleAggregateFunction(max, Array(String)),
  answers_min AggregateFunction(minForEach, Array(UInt64)),
  answers_max AggregateFunction(maxForEach, Array(UInt64))
) ${ENGINE}`;
const MINMAX_FILL = `INSERT INTO proto_counts_minmax
SELECT ${KEYS.replace('graded', 'passed IS NOT NULL AS graded')},
  count(), uniqExactState(cityHash64(run_id, attempt)), uniqExactState(cityHash64(event_id)),
  countIf(ifNull(passed, false)), countIf(notEmpty(forbidden_actions)), countIf(output IS NOT NULL),
  minIf(cityHash64(output), output IS NOT NULL), maxIf(cityHash64(output), output IS NOT NULL),
  countIf(notEmpty(checks)),
  minIf(arrayMap(ch -> ch.name, checks), notEmpty(checks)), maxIf(arrayMap(ch -> ch.name, checks), notEmpty(checks)),
  minForEachStateIf(arrayMap(ch -> cityHash64(ch.answer), checks), notEmpty(checks)),
  maxForEachStateIf(arrayMap(ch -> cityHash64(ch.answer), checks), notEmpty(checks))
FROM trials FINAL GROUP BY ${KEYS}`;

const HEAD = `
WITH startsWith(lower(run_id), 'confirm') AS marked,
     graded OR {ungraded_as_failure:Bool} AS counted,
     NOT marked AND counted AS pc`;
const COMMON = `toUInt32(sumIf(trials, NOT marked)) AS pl,
         toUInt32(sumIf(trials, pc)) AS n,
         toUInt32(sumIf(passes, NOT marked)) AS c,
         toUInt32(sumIf(trials, NOT marked AND NOT graded)) AS u,
         sumIf(outputs, pc) AS outs,
         toUInt32(sumIf(forbidden, NOT marked)) AS f,
         sumIf(checked, pc) AS checked,
         toUInt32(sumIf(trials, counted)) AS an,
         toUInt32(sum(passes)) AS ac,
         toUInt32(sumIf(trials, NOT graded)) AS au,
         toUInt32(sumIf(trials, marked)) AS m,
         toUInt32(sumIf(trials, marked AND counted)) AS mn,
         toUInt32(sumIf(passes, marked)) AS mc`;
const WHERE = `WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
    AND (empty({versions:Array(String)}) OR has({versions:Array(String)}, agent_version))
    AND ${NOT_RETRACTED}
  GROUP BY agent_version, row_id
)
ORDER BY length(r), r, v`;
const SETS_SQL = `${HEAD}
SELECT v, r,
       cnt = slots AND cnt = events AND seqs <= 1 AS exact,
       pl, n, c, u, if(outs < 2, -1, toInt8(douts > 1)) AS od, f,
       arrayMap(name -> (name, multiIf(
           checked * countEqual(first_names, name) < 2, 0,
           arrayCount(p -> p.1 = name, pairs) > 1, 2,
           1)), arrayDistinct(first_names)) AS k,
       an, ac, au, m, mn, mc
FROM (
  SELECT agent_version AS v, row_id AS r, sum(trials) AS cnt,
         uniqExactMerge(slots) AS slots, uniqExactMerge(events) AS events,
         uniqExactMergeIf(output_hashes, pc) AS douts, uniqExactMergeIf(name_lists, pc) AS seqs,
         maxIf(names, pc) AS first_names, groupUniqArrayArrayMergeIf(answers, pc) AS pairs,
         ${COMMON}
  FROM proto_counts_sets
  ${WHERE}`;
const MINMAX_SQL = `${HEAD}
SELECT v, r,
       cnt = slots AND cnt = events AND nmin = nmax AS exact,
       pl, n, c, u, if(outs < 2, -1, toInt8(omin != omax)) AS od, f,
       arrayMap(name -> (name, multiIf(
           checked * countEqual(nmin, name) < 2, 0,
           arrayMin(arrayFilter((x, nm) -> nm = name, amin, nmin))
             != arrayMax(arrayFilter((x, nm) -> nm = name, amax, nmin)), 2,
           1)), arrayDistinct(nmin)) AS k,
       an, ac, au, m, mn, mc
FROM (
  SELECT agent_version AS v, row_id AS r, sum(trials) AS cnt,
         uniqExactMerge(slots) AS slots, uniqExactMerge(events) AS events,
         minIf(output_min, pc AND outputs > 0) AS omin, maxIf(output_max, pc AND outputs > 0) AS omax,
         minIf(names_min, pc AND notEmpty(names_min)) AS nmin, maxIf(names_max, pc AND notEmpty(names_max)) AS nmax,
         minForEachMergeIf(answers_min, pc) AS amin, maxForEachMergeIf(answers_max, pc) AS amax,
         ${COMMON}
  FROM proto_counts_minmax
  ${WHERE}`;

for (const t of ['proto_counts_sets', 'proto_counts_minmax']) await c.command({ query: `DROP TABLE IF EXISTS ${t}` });
await c.command({ query: SETS_TABLE });
await c.command({ query: MINMAX_TABLE });
await timed('sets: backfill from trials FINAL', () => c.command({ query: SETS_FILL }));
await timed('min/max: backfill from trials FINAL', () => c.command({ query: MINMAX_FILL }));
await timed('merge (OPTIMIZE FINAL) of both', async () => {
  await c.command({ query: 'OPTIMIZE TABLE proto_counts_sets FINAL' });
  await c.command({ query: 'OPTIMIZE TABLE proto_counts_minmax FINAL' });
});

const params = { suite: 'bench', dataset_version: 'd1', versions: [], ungraded_as_failure: false };
const TODAY = ROW_COUNTS_SQL.replace('ORDER BY length(r), r', 'ORDER BY length(r), r, v');
const today = await run(TODAY, params);
for (const [k, q] of [
  ['sets', SETS_SQL],
  ['min/max', MINMAX_SQL],
] as const)
  if ((await run(q, params)) !== today) throw new Error(`${k}: another answer than the counts query's`);
console.log(`same answers: ${today.split('\n').length - 1} lines`);

const cases: Record<string, string> = {
  bare: BARE_GROUP_BY_SQL,
  'from trials': TODAY,
  sets: SETS_SQL,
  'min/max': MINMAX_SQL,
};
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const cpu: Record<string, number[]> = {};
const wall: Record<string, number[]> = {};
const load = [loadavg()[0]!];
for (let i = 0; i < samples; i++)
  for (const [k, q] of Object.entries(cases)) {
    const u = process.cpuUsage();
    const w = performance.now();
    await run(q, params);
    const d = process.cpuUsage(u);
    (wall[k] ??= []).push(performance.now() - w);
    (cpu[k] ??= []).push((d.user + d.system) / 1000);
  }
load.push(loadavg()[0]!);
const bare = med(cpu.bare!);
for (const [k, xs] of Object.entries(cpu))
  console.log(
    `${k.padEnd(12)} cpu med ${med(xs).toFixed(0)} ms (${(med(xs) / bare).toFixed(1)}× bare), wall med ${med(wall[k]!).toFixed(0)} ms`,
  );
console.log(`load average ${load.map((l) => l.toFixed(1)).join(' → ')}`);
for (const t of ['proto_counts_sets', 'proto_counts_minmax']) await c.command({ query: `DROP TABLE IF EXISTS ${t}` });
await store.close();
