/**
 * Where `passk serve`'s memory goes (issue #32): opens a kept generated store (bench/generatedStore.ts) in this
 * process as serve does, serves the dashboard over it and asks the dashboard bench's endpoints, then prints after
 * each: the process's RSS split (smaps_rollup: anonymous, file-backed), Node's heap and external memory, and chDB's
 * own account (MemoryTracking, jemalloc's resident/allocated/retained, each cache's bytes). The peak (VmHWM) is
 * reset after the bare queries and after each endpoint (/proc/self/clear_refs), so each line's is its own. Without
 * serve's heap bound unless V8FLAGS gives V8 flags to set at start (e.g. '--heap-growing-percent=30', what serve sets).
 *
 *   node --expose-gc --import tsx bench/profile/serveMemory.ts DIR [rows]     (DIR holds a generated store)
 *   SAMPLES=3 SMAPS=/tmp/smaps.txt V8FLAGS='--heap-growing-percent=30' …
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import {
  bareGroupBy,
  dashboardPaths,
  get,
  memoryOf,
  openGeneratedStore,
  SCOPE,
  serveInProcess,
} from '../dashboardKit.ts';

if (process.env.V8FLAGS) for (const f of process.env.V8FLAGS.split(' ')) setFlagsFromString(f);
console.log(`V8's heap limit ${getHeapStatistics().heap_size_limit / 2 ** 20} MiB`);
const dir = process.argv[2]!;
const rows = Number(process.argv[3] ?? 100_000);
const MiB = 2 ** 20;
const store = await openGeneratedStore(dir);
const server = await serveInProcess(store.client);
const status = async (path: string) => (await get(server.port, path)).status;

const rollup = () => {
  const text = readFileSync('/proc/self/smaps_rollup', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) / 1024;
  return { rss: kb('Rss'), anon: kb('Anonymous'), hwm: memoryOf().peak };
};
const chdb = async () => {
  const rs = (await store.client
    .query({
      query: `SELECT metric, toFloat64(value) AS value FROM system.metrics WHERE metric IN ('MemoryTracking', 'MarkCacheBytes',
              'PrimaryIndexCacheBytes', 'UncompressedCacheBytes', 'IndexMarkCacheBytes', 'QueryCacheBytes', 'QueryConditionCacheBytes',
              'MMapCacheCells', 'CompiledExpressionCacheBytes', 'PageCacheBytes')`,
      format: 'JSONEachRow',
    })
    .then((r) => r.json())) as { metric: string; value: number }[];
  const stats = (await store.client
    .query({ query: 'SELECT stats FROM system.jemalloc_stats', format: 'JSONEachRow' })
    .then((r) => r.json())) as { stats: string }[];
  const je = /Allocated: (\d+), active: (\d+), metadata: (\d+).*?resident: (\d+), mapped: (\d+), retained: (\d+)/.exec(
    stats[0]?.stats ?? '',
  );
  return {
    ...Object.fromEntries(rs.map((r) => [r.metric, r.value])),
    ...(je
      ? {
          'jemalloc.allocated': Number(je[1]),
          'jemalloc.active': Number(je[2]),
          'jemalloc.metadata': Number(je[3]),
          'jemalloc.resident': Number(je[4]),
          'jemalloc.mapped': Number(je[5]),
          'jemalloc.retained': Number(je[6]),
        }
      : {}),
  } as Record<string, number>;
};
const show = async (what: string) => {
  const r = rollup();
  const m = process.memoryUsage();
  const c = await chdb();
  const pick = (k: string) => ((c[k] ?? NaN) / MiB).toFixed(0);
  console.log(
    `${what.padEnd(40)} rss ${r.rss.toFixed(0)} (anon ${r.anon.toFixed(0)}, file ${(r.rss - r.anon).toFixed(0)}) hwm ${r.hwm.toFixed(0)} | node heap ${(m.heapUsed / MiB).toFixed(0)}/${(m.heapTotal / MiB).toFixed(0)} ext ${(m.external / MiB).toFixed(0)} ab ${(m.arrayBuffers / MiB).toFixed(0)} | tracked ${pick('MemoryTracking')} je.res ${pick('jemalloc.resident')} je.alloc ${pick('jemalloc.allocated')} je.retained ${pick('jemalloc.retained')} je.active ${pick('jemalloc.active')} mark ${pick('MarkCacheBytes')} pidx ${pick('PrimaryIndexCacheBytes')} unc ${pick('UncompressedCacheBytes')} imark ${pick('IndexMarkCacheBytes')} qc ${pick('QueryCacheBytes')} qcc ${pick('QueryConditionCacheBytes')}`,
  );
  return c;
};

const c0 = await show('opened');
if (process.env.ALL_METRICS) console.log(c0);
for (let i = 0; i < 3; i++) await bareGroupBy(store.client);
await show('bare ×3');
global.gc?.();
await show('bare ×3, gc');
writeFileSync('/proc/self/clear_refs', '5');
const paths = dashboardPaths(rows);
const samples = Number(process.env.SAMPLES ?? 3);
for (const p of paths) {
  for (let i = 0; i < samples; i++) {
    server.move();
    if ((await status(p)) !== 200) throw new Error(p);
    await status(p);
    server.move();
    await Promise.all(Array.from({ length: 10 }, () => status(p)));
  }
  await show(p.replace(SCOPE, '…').slice(0, 40));
  writeFileSync('/proc/self/clear_refs', '5');
}
global.gc?.();
await show('after gc');
if (process.env.ALL_METRICS) console.log(await chdb());
if (process.env.SMAPS) writeFileSync(process.env.SMAPS, readFileSync('/proc/self/smaps'));
await server.close();
await store.close();
