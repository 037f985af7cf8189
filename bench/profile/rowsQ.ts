/**
 * The slow Rows pages' queries (issue #32) timed one by one on a kept generated store (bench/generatedStore.ts,
 * `rows` rows × 2 versions × 5 attempts, `dir`), alternating: the bare GROUP BY, the counts with their proof (means),
 * the check names from every trial (FINAL), the search's first pass, the explorer's trials of 200 scattered rows,
 * and the two cold pages (`sort=c.rate&dir=desc&offset=400`, `to=flip&sort=b.latency&q=request 123`). Wall and
 * CPU of the process, medians of `samples`.
 *
 *   node --import tsx bench/profile/rowsQ.ts 100000 5 [dir]
 */
import {
  explorerCheckNames,
  explorerCountsFrom,
  explorerTrials,
  rowsMaybeMatching,
} from '../../sinks/clickhouse/queries/explorerCounts.ts';
import { RowQuery } from '../../web/rowPage.ts';
import { rowPageFromStore } from '../../web/storeRows.ts';
import { bareGroupBy, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? `/tmp/rowsq-${rows}`;
const store = await openGeneratedStore(dir, rows);
const scope = { suite: 'bench', dataset_version: 'd1' };
const search = { ...scope, words: ['request', '123'], versions: ['v1', 'v2'] };
const ids = Array.from({ length: 200 }, (_, i) => `row-${(i * 7919) % rows}`);

const pages = {
  rate: {
    ...scope,
    ...RowQuery.parse({ baseline: 'v1', candidate: 'v2', sort: 'c.rate', dir: 'desc', offset: '400' }),
  },
  q: {
    ...scope,
    ...RowQuery.parse({ baseline: 'v1', candidate: 'v2', to: 'flip', sort: 'b.latency', q: 'request 123' }),
  },
};
const only = process.env.ONLY?.split(',');
const tasks: [string, () => Promise<unknown>][] = [
  ['bare GROUP BY', () => bareGroupBy(store.client, 'JSONCompactEachRow')],
  ['counts+proof, plain', () => explorerCountsFrom(store.client, scope, { checks: false, means: false })],
  ['counts+proof, means', () => explorerCountsFrom(store.client, scope, { checks: false, means: true })],
  ['check names (FINAL)', () => explorerCheckNames(store.client, scope)],
  ['search first pass', () => rowsMaybeMatching(store.client, search)],
  ['trials of 200 rows', () => explorerTrials(store.client, { ...scope, rowIds: ids })],
  ['page c.rate cold', () => rowPageFromStore(store.client, pages.rate)],
  ['page flip+lat+q cold', () => rowPageFromStore(store.client, pages.q)],
];
await alternate(
  tasks.filter(([n], i) => i === 0 || !only || only.some((o) => n.includes(o))),
  samples,
);
await store.close();
