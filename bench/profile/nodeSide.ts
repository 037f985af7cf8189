import { openClickHouse } from '../../sinks/clickhouse/index.ts';
import type { Querier } from '../../sinks/clickhouse/queries/select.ts';
import { comparisonFromStore, reportFromStore } from '../../sinks/clickhouse/queries/storeReport.ts';

/** The Node side of the overview and the comparison alone: each query's answer text kept after its first run. */
const rows = Number(process.argv[2] ?? 20000);
const store = await openClickHouse({ kind: 'embedded', path: `/tmp/dashsplit-${rows}`, database: 'passk' });
const kept = new Map<string, string>();
const client: Querier = {
  query: (async (p: { query: string; query_params?: unknown; format?: string }) => {
    const k = JSON.stringify([p.query, p.query_params, p.format]);
    if (!kept.has(k)) kept.set(k, await (await store.client.query(p as never)).text());
    const text = kept.get(k)!;
    return {
      text: async () => text,
      json: async () =>
        p.format === 'JSONEachRow' || p.format === 'JSONCompactEachRow'
          ? text
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l))
          : JSON.parse(text),
    };
  }) as never,
};
const scope = { suite: 'bench', dataset_version: 'd1' };
const runs: Record<string, () => Promise<unknown>> = {
  report: () => reportFromStore(client, scope),
  compare: () => comparisonFromStore(client, { ...scope, baseline: 'v1', candidate: 'v2' }),
};
for (const f of Object.values(runs)) await f();
const out: Record<string, number[]> = {};
for (let i = 0; i < Number(process.argv[3] ?? 5); i++)
  for (const [k, f] of Object.entries(runs)) {
    const c = process.cpuUsage();
    await f();
    const d = process.cpuUsage(c);
    (out[k] ??= []).push((d.user + d.system) / 1000);
  }
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [k, xs] of Object.entries(out))
  console.log(`${k.padEnd(8)} cpu min ${Math.min(...xs).toFixed(0)} med ${med(xs).toFixed(0)} ms`);
await store.close();
