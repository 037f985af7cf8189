import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { StoreClient } from '../sinks/clickhouse/index.ts';
import { bareGroupBy, dashboardPaths, get, memoryOf, openGeneratedStore, SCOPE } from './dashboardKit.ts';
import { benchAttempts, generateStore } from './generatedStore.ts';

/**
 * The dashboard's API on a generated store (issue #32): `rows` rows × 2 versions × `attempts` attempts (5 by default;
 * PASSK_BENCH_ATTEMPTS) of trials written by
 * SQL inside embedded chDB with the tables that go with them (bench/generatedStore.ts), then `passk serve`'s server over it (in this process). Per endpoint:
 * - cold: the answer after the store's watermark moved (nothing kept), one client; p95 of `samples` requests;
 * - cold, 10 clients: the same question from 10 clients at once (they share one query); p95 of their answers;
 * - warm: the same question again before anything is written (the kept answer); p95;
 * - next page (Rows pages): the following page of the same question before anything is written; p95;
 * each against the bare ClickHouse query underneath: `GROUP BY row_id, agent_version` (count, countIf) over the
 * scope's trials, timed in the same run (in this process, before the server starts). The server is `passk serve`'s
 * (bench/dashboardServe.ts) in a process of its own, which opens the store after this one closed it, so its RSS is
 * serving's alone (chDB's memory included): its peak over all of it (VmHWM) and what it holds at the end.
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
  attempts: number;
  bareP95Ms: number;
  endpoints: EndpointLine[];
  /** The serve process's RSS once the store is open, at its peak over every request, and after them (MiB). */
  rssOpenedMb: number;
  rssPeakMb: number;
  rssMb: number;
  /** The serve process's CPU time (user + system) over the lines, in seconds: the same work, whatever the load. */
  serveCpuS: number;
  generateMs: number;
};

/** The issue's bound on `serve`'s RSS: 1 GB, in MiB (10^9 bytes = 953.7 MiB). */
export const SERVE_RSS_TARGET_MIB = 1e9 / 2 ** 20;

/** CPU time (user + system) a process has used, in seconds. */
const cpuOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: clock ticks (USER_HZ = 100)
};

/** The server of bench/dashboardServe.ts over the store at `path`: its port, its process, and a watermark move. */
const startServe = async (path: string, heap: 'bounded' | 'unbounded') => {
  const child: ChildProcess = fork(fileURLToPath(new URL('./dashboardServe.ts', import.meta.url)), [path, heap], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`the bench's server exited (${code}) before it served`)));
  });
  child.removeAllListeners('exit');
  return {
    port,
    pid: child.pid!,
    move: () =>
      new Promise<void>((resolve) => {
        child.once('message', () => resolve());
        child.send('move');
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
};

const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!;

export async function benchDashboard(o: {
  rows: number;
  /** Attempts per row and version: benchAttempts() (PASSK_BENCH_ATTEMPTS, 5 unset) by default. */
  attempts?: number;
  samples?: number;
  /** Only the endpoints whose path contains one of these (e.g. 'overview', 'compare'); all by default. */
  endpoints?: readonly string[];
  /** 'unbounded': the server's heap grows as V8's default lets it (serve before deploy/heap.ts), for an A/B. */
  heap?: 'bounded' | 'unbounded';
  log?: (line: string) => void;
}): Promise<DashboardBench> {
  const samples = o.samples ?? 5;
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-dashboard-'));
  let store: StoreClient | undefined;
  let server: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    const generated = await generateStore({ dataDir: dir, rows: o.rows, attempts: o.attempts ?? benchAttempts(), log });
    const opened = (store = await openGeneratedStore(dir));

    const bare = async () => {
      const t = performance.now();
      await bareGroupBy(opened.client);
      return performance.now() - t;
    };
    await bare();
    const bareMs: number[] = [];
    for (let i = 0; i < samples; i++) bareMs.push(await bare());
    // the store is the server's from here on (chDB lets one process hold it)
    await opened.close();
    store = undefined;
    const serve = (server = await startServe(join(dir, 'store'), o.heap ?? 'bounded'));
    const port = serve.port;
    const rssOpenedMb = memoryOf(serve.pid).rss;
    const cpu0 = cpuOf(serve.pid);
    // the watermark moves before every cold request, so nothing is answered from memory

    const paths = dashboardPaths(o.rows);
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
        await serve.move();
        const [one] = await timed(1);
        cold.push(one!.ms);
        bytes = one!.bytes;
        warm.push((await timed(1))[0]!.ms);
        if (next) turned.push((await timed(1, next))[0]!.ms);
        await serve.move();
        for (const a of await timed(10)) parallel.push(a.ms);
      }
      const line = {
        endpoint: path.replace(SCOPE, '…').replace('?…&', '?…'),
        coldP95Ms: p95(cold),
        parallelP95Ms: p95(parallel),
        warmP95Ms: p95(warm),
        ...(next ? { nextPageP95Ms: p95(turned) } : {}),
        bytes,
      };
      const m = memoryOf(serve.pid);
      log(
        `  ${line.endpoint}: cold p95 ${line.coldP95Ms.toFixed(0)} ms, 10 clients ${line.parallelP95Ms.toFixed(0)} ms; serve RSS ${m.rss.toFixed(0)} MiB (peak ${m.peak.toFixed(0)})`,
      );
      endpoints.push(line);
    }
    return {
      trials: generated.trials,
      rows: o.rows,
      attempts: generated.attempts,
      bareP95Ms: p95(bareMs),
      endpoints,
      rssOpenedMb,
      rssPeakMb: memoryOf(serve.pid).peak,
      rssMb: memoryOf(serve.pid).rss,
      serveCpuS: cpuOf(serve.pid) - cpu0,
      generateMs: generated.ms,
    };
  } finally {
    await server?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
