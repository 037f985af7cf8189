/**
 * Cold `/api/overview` and `/api/compare` of two checkouts in one process, alternating, on one kept generated store
 * (bench/generatedStore.ts): each checkout's `clickhouseDashboardData` and server over the same chDB client, the
 * watermark moved before every request; wall and CPU of the process per request (medians of `samples`), so both
 * are measured under the same load; and each checkout's `countRows` of the two versions alone (the comparison's
 * counts: queries, proof and rows placed). The answers of both are compared byte for byte first.
 *
 *   node --import tsx bench/profile/apiAb.ts 100000 5 DIR OTHER_CHECKOUT
 */
import { join } from 'node:path';
import { bareGroupBy, getText, openGeneratedStore, SCOPE, serveInProcess } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';
import type * as Data from '../../web/clickhouseData.ts';
import type * as Server from '../../web/server.ts';
import type * as Counts from '../../sinks/clickhouse/queries/rowCounts.ts';

const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4]!;
const other = process.argv[5]!;
const store = await openGeneratedStore(dir);
const serverOf = async (root: string) =>
  serveInProcess(store.client, {
    clickhouseDashboardData: ((await import(join(root, 'web/clickhouseData.ts'))) as typeof Data)
      .clickhouseDashboardData,
    createDashboardServer: ((await import(join(root, 'web/server.ts'))) as typeof Server).createDashboardServer,
  });
const countsOf = async (root: string) =>
  ((await import(join(root, 'sinks/clickhouse/queries/rowCounts.ts'))) as typeof Counts).countRows;
const counts = { other: await countsOf(other), this: await countsOf(join(import.meta.dirname, '../..')) };
const two = { suite: 'bench', dataset_version: 'd1', versions: ['v1', 'v2'] };
const servers = { other: await serverOf(other), this: await serverOf(join(import.meta.dirname, '../..')) };
const paths = { overview: `/api/overview?${SCOPE}`, compare: `/api/compare?${SCOPE}&baseline=v1&candidate=v2` };
const cold = (which: keyof typeof servers, path: string) => () => {
  servers[which].move();
  return getText(servers[which].port, path);
};
for (const [name, path] of Object.entries(paths)) {
  const [a, b] = [await cold('other', path)(), await cold('this', path)()];
  console.log(`${name}: ${a === b ? 'byte-identical' : 'DIFFERENT'} (${b.length} bytes)`);
  if (a !== b) process.exitCode = 1;
}
await alternate(
  [
    ['bare GROUP BY', () => bareGroupBy(store.client)],
    ['counts (v1, v2), other', () => counts.other(store.client, two)],
    ['counts (v1, v2), this', () => counts.this(store.client, two)],
    ['overview, other', cold('other', paths.overview)],
    ['overview, this', cold('this', paths.overview)],
    ['compare, other', cold('other', paths.compare)],
    ['compare, this', cold('this', paths.compare)],
  ],
  samples,
);
await servers.other.close();
await servers.this.close();
await store.close();
