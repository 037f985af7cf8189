import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openClickHouse } from '../sinks/clickhouse/index.ts';
import { clickhouseDashboardData } from '../web/clickhouseData.ts';
import { storeWatermark } from '../web/queries.ts';
import { createDashboardServer } from '../web/server.ts';
import { ATTEMPTS, generateStore, VERSIONS } from './generatedStore.ts';

/**
 * The dashboard's API on a generated store (issue #32): `rows` rows × 2 versions × 5 attempts of trials written by
 * SQL inside embedded chDB with the tables that go with them (bench/generatedStore.ts), then `passk serve`'s server over it (in this process). Per endpoint:
 * - cold: the answer after the store's watermark moved (nothing kept), one client; p95 of `samples` requests;
 * - cold, 10 clients: the same question from 10 clients at once (they share one query); p95 of their answers;
 * - warm: the same question again before anything is written (the kept answer); p95;
 * - next page (Rows pages): the following page of the same question before anything is written; p95;
 * each against the bare ClickHouse query underneath: `GROUP BY row_id, agent_version` (count, countIf) over the
 * scope's trials, timed in the same run. And the process's RSS after all of it (chDB's memory included).
 */
export type EndpointLine = {
  endpoint: string;
  coldP95Ms: number;
  parallelP95Ms: number;
  warmP95Ms: number;
  /** Rows pages: the next page of the same question, the store unchanged (its facets kept, its counts asked again). */
  nextPageP95Ms?: number;
  bytes: number;
};
export type DashboardBench = {
  trials: number;
  rows: number;
  bareP95Ms: number;
  endpoints: EndpointLine[];
  rssMb: number;
  generateMs: number;
};

const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!;

const get = (port: number, path: string): Promise<{ status: number; bytes: number }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on('error', reject);
    req.end();
  });

export async function benchDashboard(o: {
  rows: number;
  samples?: number;
  /** Only the endpoints whose path contains one of these (e.g. 'overview', 'compare'); all by default. */
  endpoints?: readonly string[];
  log?: (line: string) => void;
}): Promise<DashboardBench> {
  const samples = o.samples ?? 5;
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-dashboard-'));
  let store: Awaited<ReturnType<typeof openClickHouse>> | undefined;
  let server: Awaited<ReturnType<typeof createDashboardServer>> | undefined;
  try {
    const generateMs = (await generateStore({ dataDir: dir, rows: o.rows, log })).ms;
    const opened = (store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk' }));

    // the watermark moves before every cold request, so nothing is answered from memory
    let epoch = 0;
    const data = clickhouseDashboardData(opened.client, async () => `${await storeWatermark(opened.client)}#${epoch}`);
    server = await createDashboardServer({ data, port: 0, pollMs: 3_600_000 });
    const port = server.port;

    const scope = 'suite=bench&dataset_version=d1';
    const bare = async () => {
      const t = performance.now();
      await opened.client
        .query({
          query:
            "SELECT row_id, agent_version, count() AS n, countIf(passed) AS c FROM trials WHERE suite = 'bench' AND dataset_version = 'd1' GROUP BY row_id, agent_version",
          format: 'JSONEachRow',
        })
        .then((r) => r.json());
      return performance.now() - t;
    };
    await bare();
    const bareMs: number[] = [];
    for (let i = 0; i < samples; i++) bareMs.push(await bare());

    const paths = [
      '/api/groups',
      `/api/overview?${scope}`,
      `/api/compare?${scope}&baseline=v1&candidate=v2`,
      `/api/rows?${scope}&baseline=v1&candidate=v2`,
      `/api/rows?${scope}&baseline=v1&candidate=v2&sort=c.rate&dir=desc&offset=400`,
      `/api/rows?${scope}&baseline=v1&candidate=v2&to=flip&sort=b.latency&q=request%20123`,
      `/api/row?${scope}&row_id=row-${Math.floor(o.rows / 2)}&versions=v1,v2`,
    ];
    const endpoints: EndpointLine[] = [];
    for (const path of paths.filter((p) => !o.endpoints || o.endpoints.some((e) => p.includes(e)))) {
      const timed = async (clients: number, asked = path) => {
        const t = performance.now();
        const answers = await Promise.all(
          Array.from({ length: clients }, async () => {
            const r = await get(port, asked);
            if (r.status !== 200) throw new Error(`${asked}: HTTP ${r.status}`);
            return { ms: performance.now() - t, bytes: r.bytes };
          }),
        );
        return answers;
      };
      const cold: number[] = [];
      const parallel: number[] = [];
      const warm: number[] = [];
      const turned: number[] = [];
      const offset = Number(/[?&]offset=(\d+)/.exec(path)?.[1] ?? 0);
      const next = path.startsWith('/api/rows?')
        ? `${path.replace(/&offset=\d+/, '')}&offset=${offset + 200}`
        : undefined;
      let bytes = 0;
      for (let i = 0; i < samples; i++) {
        epoch++;
        const [one] = await timed(1);
        cold.push(one!.ms);
        bytes = one!.bytes;
        warm.push((await timed(1))[0]!.ms);
        if (next) turned.push((await timed(1, next))[0]!.ms);
        epoch++;
        for (const a of await timed(10)) parallel.push(a.ms);
      }
      const line = {
        endpoint: path.replace(scope, '…').replace('?…&', '?…'),
        coldP95Ms: p95(cold),
        parallelP95Ms: p95(parallel),
        warmP95Ms: p95(warm),
        ...(next ? { nextPageP95Ms: p95(turned) } : {}),
        bytes,
      };
      log(
        `  ${line.endpoint}: cold p95 ${line.coldP95Ms.toFixed(0)} ms, 10 clients ${line.parallelP95Ms.toFixed(0)} ms`,
      );
      endpoints.push(line);
    }
    return {
      trials: o.rows * VERSIONS.length * ATTEMPTS,
      rows: o.rows,
      bareP95Ms: p95(bareMs),
      endpoints,
      rssMb: process.memoryUsage().rss / 2 ** 20,
      generateMs,
    };
  } finally {
    await server?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
