/**
 * What the dashboard's benches share (bench/dashboard.ts, bench/dashboardServe.ts, bench/firstPaint.ts and the
 * scripts of bench/profile over a kept generated store): the generated store opened as `passk serve` opens it, the
 * bare query every line is measured against, the endpoints asked, `passk serve`'s server in this process with a
 * watermark the caller moves, a GET of it, and a process's memory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { openClickHouse, type StoreClient } from '../sinks/clickhouse/index.ts';
import type { clickhouseDashboardData } from '../web/clickhouseData.ts';
import type { createDashboardServer } from '../web/server.ts';

/**
 * The store of the generated data dir `dir` (bench/generatedStore.ts), opened as `passk serve` opens it; given
 * `rows`, a store of that many rows is generated there first when `dir` does not exist (kept for the next run).
 * The generator is loaded then only: a process that serves (bench/dashboardServe.ts) holds no more than serve's.
 */
export const openGeneratedStore = async (dir: string, rows?: number): Promise<StoreClient> => {
  if (rows !== undefined && !existsSync(dir)) {
    const { generateStore } = await import('./generatedStore.ts');
    await generateStore({ dataDir: dir, rows, log: console.log });
  }
  return openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk' });
};

/** The bare ClickHouse query under the dashboard's lines: count and countIf per row and version over the scope's trials. */
export const BARE_GROUP_BY_SQL =
  "SELECT row_id, agent_version, count() AS n, countIf(passed) AS c FROM trials WHERE suite = 'bench' AND dataset_version = 'd1' GROUP BY row_id, agent_version";

/** The bare query asked and its answer read whole. */
export const bareGroupBy = (
  client: StoreClient['client'],
  format: 'JSONEachRow' | 'JSONCompactEachRow' = 'JSONEachRow',
): Promise<unknown> => client.query({ query: BARE_GROUP_BY_SQL, format }).then((r) => r.json());

/** The generated store's scope, as the endpoints' query string. */
export const SCOPE = 'suite=bench&dataset_version=d1';

/** The endpoints the dashboard bench asks of a store of `rows` rows: the groups, the overview, the comparison, three Rows pages and a row. */
export const dashboardPaths = (rows: number): string[] => [
  '/api/groups',
  `/api/overview?${SCOPE}`,
  `/api/compare?${SCOPE}&baseline=v1&candidate=v2`,
  `/api/rows?${SCOPE}&baseline=v1&candidate=v2`,
  `/api/rows?${SCOPE}&baseline=v1&candidate=v2&sort=c.rate&dir=desc&offset=400`,
  `/api/rows?${SCOPE}&baseline=v1&candidate=v2&to=flip&sort=b.latency&q=request%20123`,
  `/api/row?${SCOPE}&row_id=row-${Math.floor(rows / 2)}&versions=v1,v2`,
];

/** The modules the server is made of: this checkout's by default, another's for an A/B. */
export interface DashboardModules {
  readonly clickhouseDashboardData: typeof clickhouseDashboardData;
  readonly createDashboardServer: typeof createDashboardServer;
}

/**
 * `passk serve`'s dashboard server over `client` in this process (no poll): its watermark is the store's and a count
 * that `move()` bumps, so the first request after a move finds nothing kept. The web modules are loaded here, not
 * where this file is imported: the bench process that serves in another (bench/dashboard.ts) does not hold them.
 */
export const serveInProcess = async (client: StoreClient['client'], modules?: DashboardModules) => {
  const { storeWatermark } = await import('../web/queries.ts');
  const web = modules ?? { ...(await import('../web/clickhouseData.ts')), ...(await import('../web/server.ts')) };
  let epoch = 0;
  const data = web.clickhouseDashboardData(client, async () => `${await storeWatermark(client)}#${epoch}`);
  const server = await web.createDashboardServer({ data, port: 0, pollMs: 3_600_000 });
  return {
    port: server.port,
    move: () => void epoch++,
    close: () => server.close(),
  };
};

/** GET `path` of the server on `port`: its status and the length of its body (not kept). */
export const get = (port: number, path: string): Promise<{ status: number; bytes: number }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on('error', reject);
    req.end();
  });

/** GET `path` of the server on `port`: its body, as text; rejected unless it is answered 200. */
export const getText = (port: number, path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`${path}: HTTP ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });

/** VmRSS and VmHWM (the peak) of a process, this one by default, in MiB (NaN where /proc does not say). */
export const memoryOf = (pid: number | 'self' = 'self'): { rss: number; peak: number } => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
};
