/**
 * The dashboard's cold overview, comparison and Rows first page from its data functions (web/clickhouseData.ts, as
 * `passk serve` builds them) over a kept generated store in `dir`, the watermark moved before each: wall and CPU of
 * the process per answer (chDB runs in it; medians of `samples`), alternating with the bare `GROUP BY row_id,
 * agent_version`. No HTTP: at load 30 the in-process server of apiCold.ts closed its connection (its 10 s header
 * deadline) while an answer's JSON held the event loop. The store must exist (bench/generatedStore.ts; e.g. the one
 * apiCold.ts leaves, PASSK_BENCH_ATTEMPTS=2 for 2 attempts a row).
 *
 *   node --import tsx bench/profile/apiData.ts dir [samples]
 */
import { bareGroupBy, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import { storeWatermark } from '../../web/queries.ts';
const store = await openGeneratedStore(process.argv[2]!);
let epoch = 0;
const data = clickhouseDashboardData(store.client, async () => `${await storeWatermark(store.client)}#${epoch}`);
const scope = { suite: 'bench', dataset_version: 'd1' };
const cold = (f: () => Promise<unknown>) => () => {
  epoch++;
  return f();
};
await alternate(
  [
    ['bare GROUP BY', () => bareGroupBy(store.client)],
    ['cold overview', cold(() => data.overview(scope))],
    ['cold compare', cold(() => data.compare({ ...scope, baseline: 'v1', candidate: 'v2' }))],
    ['cold rows', cold(() => data.rows({ ...scope, baseline: 'v1', candidate: 'v2', limit: 200 }))],
  ],
  Number(process.argv[3] ?? 2),
);
await store.close();
