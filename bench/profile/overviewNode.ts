/**
 * The overview's Node side alone (`reportFromStore` given counts already read), with a CPU profile:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/overviewNode.ts DIR [samples]
 */
import { performance } from 'node:perf_hooks';
import { countRows } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { reportFromStore } from '../../sinks/clickhouse/queries/storeReport.ts';
import { openGeneratedStore } from '../dashboardKit.ts';

const dir = process.argv[2]!;
const samples = Number(process.argv[3] ?? 5);
const store = await openGeneratedStore(dir);
const scope = { suite: 'bench', dataset_version: 'd1' };
const all = (await countRows(store.client, scope)).rows;
for (let i = 0; i < samples; i++) {
  const t = performance.now();
  const u = process.cpuUsage();
  await reportFromStore(store.client, scope, undefined, async () => all);
  const d = process.cpuUsage(u);
  console.log(
    `overview Node side: wall ${(performance.now() - t).toFixed(0)} ms, cpu ${((d.user + d.system) / 1000).toFixed(0)} ms`,
  );
}
await store.close();
