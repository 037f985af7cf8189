/**
 * The overview's and the comparison's per-row counts from the row state (`countRows` when its proof holds) against
 * the same counts from every trial (`rowCountsFromTrials`, what every request did before), and the whole
 * `reportFromStore` / `comparisonFromStore` with each, on the dashboard bench's generated store (bench/generatedStore.ts,
 * `rows` rows × 2 versions × 5 attempts, kept in /tmp/countsfrom-ROWS), alternating A and B in one process, with the
 * bare `GROUP BY row_id, agent_version` of bench/dashboard.ts: wall and CPU time of the process (chDB runs in it).
 *
 *   node --import tsx bench/profile/countsFrom.ts 100000 5
 */
import { countRows, rowCountsFromTrials } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { comparisonFromStore, reportFromStore } from '../../sinks/clickhouse/queries/storeReport.ts';
import { bareGroupBy, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = `/tmp/countsfrom-${rows}`;
const store = await openGeneratedStore(dir, rows);
const scope = { suite: 'bench', dataset_version: 'd1' };
const pair = { ...scope, baseline: 'v1', candidate: 'v2' };

const proved = await countRows(store.client, scope);
if (proved.from !== 'row_state')
  throw new Error(`the generated store's row state is not proved whole (${proved.from})`);

const tasks: [string, () => Promise<unknown>][] = [
  ['bare GROUP BY', () => bareGroupBy(store.client)],
  ['counts from the trials', () => rowCountsFromTrials(store.client, scope)],
  ['counts from row_state', () => countRows(store.client, scope)],
  [
    'overview, trials',
    () => reportFromStore(store.client, scope, undefined, (s) => rowCountsFromTrials(store.client, s)),
  ],
  ['overview, row_state', () => reportFromStore(store.client, scope)],
  [
    'compare, trials',
    () => comparisonFromStore(store.client, pair, undefined, (s) => rowCountsFromTrials(store.client, s)),
  ],
  ['compare, row_state', () => comparisonFromStore(store.client, pair)],
];
await alternate(tasks, samples);
await store.close();
