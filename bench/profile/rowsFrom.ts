/**
 * The Rows view's counts (`/api/rows`, web/storeRows.ts) from the row state against the trials, on the dashboard
 * bench's generated store (bench/generatedStore.ts, `rows` rows × 2 versions × 5 attempts, kept in `dir`,
 * /tmp/rowsfrom-ROWS by default, written by this checkout's schema): the bare `GROUP BY row_id, agent_version`, the
 * explorer's counts from every trial (`explorerCountsFromTrials`) and from the row state with its proof
 * (`explorerCountsFrom`), each for the first page's needs (no means, no checks) and a sort by latency (the means),
 * then a cold first page and a page sorted by latency (`rowPageFromStore`, counts not kept). Wall and CPU of the
 * process (chDB runs in it), medians of `samples`, alternating.
 *
 *   node --import tsx bench/profile/rowsFrom.ts 100000 5 [dir]
 */
import { explorerCountsFrom, explorerCountsFromTrials } from '../../sinks/clickhouse/queries/explorerCounts.ts';
import { RowQuery } from '../../web/rowPage.ts';
import { rowPageFromStore } from '../../web/storeRows.ts';
import { bareGroupBy, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? `/tmp/rowsfrom-${rows}`;
const store = await openGeneratedStore(dir, rows);
const scope = { suite: 'bench', dataset_version: 'd1' };
const plain = { checks: false, means: false };
const means = { checks: false, means: true };

const proved = await explorerCountsFrom(store.client, scope, means);
if (proved.from !== 'row_state')
  throw new Error(`the generated store's row state is not proved whole (${proved.from})`);
const a = JSON.stringify(proved.rows.map((r) => [r.agent_version, r.row_id, r.mean_latency_ms, r.n, r.c]).sort());
const b = JSON.stringify(
  (await explorerCountsFromTrials(store.client, scope, means))
    .map((r) => [r.agent_version, r.row_id, r.mean_latency_ms, r.n, r.c])
    .sort(),
);
if (a !== b) throw new Error('the row state and the trials count differently');

await alternate(
  [
    ['bare GROUP BY', () => bareGroupBy(store.client, 'JSONCompactEachRow')],
    ['counts, trials', () => explorerCountsFromTrials(store.client, scope, plain)],
    ['counts, row_state', () => explorerCountsFrom(store.client, scope, plain)],
    ['means, trials', () => explorerCountsFromTrials(store.client, scope, means)],
    ['means, row_state', () => explorerCountsFrom(store.client, scope, means)],
    ['page 1 cold', () => rowPageFromStore(store.client, { ...scope, ...RowQuery.parse({}) })],
    [
      'page by latency cold',
      () => rowPageFromStore(store.client, { ...scope, ...RowQuery.parse({ sort: 'b.latency', dir: 'desc' }) }),
    ],
  ],
  samples,
);
await store.close();
