/**
 * The OTLP receiver's throughput: 4 exporters POST `/v1/traces` (protobuf, 100 traces of 3 spans per export, ~1.5 KB
 * of text per trace, an email in each input) to a real `passk ingest` server on the embedded log, against its tight
 * baseline in the same run: decoding the same request bodies, alone (`decodeProtobuf`), in the same process. The
 * server does the baseline's work plus assembly, the conventions' mapping, sampling, redaction, validation and the
 * durable publish. Also reported: the export latency p50 and p95 the exporters saw.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../log/index.ts';
import { createIngestServer } from '../producers/ingest/index.ts';
import { decodeProtobuf, encodeTraceRequest } from '../producers/otlp/index.ts';
import { kv, otlpBodies, spansOf } from './otlpBodies.ts';
import type { Redactor } from '../producers/sampler/index.ts';

export { otlpBodies } from './otlpBodies.ts';

export interface OtlpBenchOptions {
  /** Traces per run. @default 20000 */
  readonly n?: number;
  /** Traces per export. @default 100 */
  readonly batch?: number;
  /** Concurrent exporters. @default 4 */
  readonly clients?: number;
  /** Alternating baseline / receiver rounds; the best of each is kept. @default 3 */
  readonly rounds?: number;
  /** The receiver's redactors (`[]`: none, to see what redaction costs). @default the sampler's */
  readonly redactors?: readonly Redactor[];
  /** The embedded log appends from its writer thread (`appendInThread`; `passk ingest` does not, yet). @default false */
  readonly appendInThread?: boolean;
  readonly log?: (line: string) => void;
}

export interface OtlpBenchLine {
  readonly name: string;
  readonly tracesPerSec: number;
  readonly baselinePerSec: number;
  readonly ratio: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  /**
   * The process's CPU time per trace in the best receiver round (server and in-process exporters), µs: steadier
   * than the rates when other processes share the cores.
   */
  readonly cpuUsPerTrace: number;
}

const TOKEN = 'bench-otlp-token-0123456789';
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

export const benchOtlp = async (opts: OtlpBenchOptions = {}): Promise<OtlpBenchLine> => {
  const n = opts.n ?? 20_000;
  const batch = opts.batch ?? 100;
  const clients = opts.clients ?? 4;
  const rounds = opts.rounds ?? 3;
  const say = opts.log ?? (() => undefined);
  const bodies = otlpBodies(n, batch);
  const bytes = bodies.reduce((s, b) => s + b.length, 0);
  say(`otlp: ${bodies.length} exports, ${(bytes / n).toFixed(0)} bytes per trace`);

  const baseline = () => {
    const t0 = performance.now();
    let spans = 0;
    for (const b of bodies) spans += decodeProtobuf(b).resourceSpans![0]!.scopeSpans![0]!.spans!.length;
    if (spans !== n * 3) throw new Error(`bench: decoded ${spans} spans, expected ${n * 3}`);
    return (n / (performance.now() - t0)) * 1000;
  };

  const receiver = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-bench-otlp-'));
    const log = await createEmbeddedEventLog({ dataDir: dir, appendInThread: opts.appendInThread ?? false });
    // a writer thread (if any) started and its connection open before the clock, as in a running server
    await log.publisher.publishDeadLetters([]);
    const server = await createIngestServer({
      publisher: log.publisher,
      token: TOKEN,
      port: 0,
      timeouts: { headersTimeoutMs: 300_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 300_000 },
      ...(opts.redactors ? { otlp: { redactors: opts.redactors } } : {}),
    });
    const url = new URL('/v1/traces', server.url);
    const latencies: number[] = [];
    try {
      let next = 0;
      const client = async () => {
        while (next < bodies.length) {
          const body = bodies[next++]!;
          const t = performance.now();
          const res = await fetch(url, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-protobuf' },
            body,
          });
          const answer = new Uint8Array(await res.arrayBuffer());
          latencies.push(performance.now() - t);
          if (res.status !== 200 || answer.length !== 0)
            throw new Error(`bench: the receiver answered ${res.status} (${answer.length} bytes of partial success)`);
        }
      };
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await Promise.all(Array.from({ length: clients }, client));
      const cpu = process.cpuUsage(cpu0);
      return { perSec: (n / (performance.now() - t0)) * 1000, latencies, cpuUs: (cpu.user + cpu.system) / n };
    } finally {
      await server.close();
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  let base = 0;
  let best = { perSec: 0, latencies: [] as number[], cpuUs: 0 };
  for (let r = 0; r < rounds; r++) {
    base = Math.max(base, baseline());
    const got = await receiver();
    if (got.perSec > best.perSec) best = got;
    say(
      `otlp round ${r + 1}/${rounds}: decode-only ${Math.round(base)}/s, receiver ${Math.round(got.perSec)} traces/s, ${got.cpuUs.toFixed(0)} µs CPU per trace`,
    );
  }
  return {
    name: `OTLP /v1/traces, ${batch}-trace protobuf exports, ${clients} exporters${opts.redactors?.length === 0 ? ', no redaction' : ''}`,
    tracesPerSec: best.perSec,
    baselinePerSec: base,
    ratio: best.perSec / base,
    p50Ms: quantile(best.latencies, 0.5),
    p95Ms: quantile(best.latencies, 0.95),
    cpuUsPerTrace: best.cpuUs,
  };
};

export interface HealthUnderLoadLine {
  /** The slowest `/healthz` answer while the big exports were processed, ms. */
  readonly busyMaxMs: number;
  /** The slowest `/healthz` answer of the same poller against the idle server, in the same run, ms. */
  readonly idleMaxMs: number;
  readonly exports: number;
  /** How long the big exports took, all of them inside the poller's window. */
  readonly exportMs: number;
}

/**
 * `/healthz` while the receiver takes traces with a 1.5 MB tool argument and an 80 KB base64 image in the prompt (the
 * shapes that once held the server for seconds): a poller in another process (a poller on the server's own event loop
 * would be delayed with it and measure nothing) asks every 10 ms; the slowest answer, against the same poller's
 * slowest answer on the idle server (each poller's first answer, which opens its connection, left out).
 */
export const benchHealthUnderBigSpans = async (opts: { exports?: number; log?: (line: string) => void } = {}) => {
  const { spawn } = await import('node:child_process');
  const exports = opts.exports ?? 5;
  const say = opts.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-health-'));
  const log = await createEmbeddedEventLog({ dataDir: dir });
  const server = await createIngestServer({ publisher: log.publisher, token: TOKEN, port: 0 });
  const big = (i: number) => {
    const [chat, tool, root] = spansOf(i);
    const image = `data:image/png;base64,${Buffer.alloc(60_000, i).toString('base64')}`;
    return [
      chat!,
      { ...tool!, attributes: [...tool!.attributes, kv('gen_ai.tool.call.result', 'x7'.repeat(750_000))] },
      { ...root!, attributes: [...root!.attributes, kv('gen_ai.prompt', `look at ${image}`)] },
    ];
  };
  const bodies = Array.from({ length: exports }, (_, i) =>
    encodeTraceRequest({
      resourceSpans: [{ resource: { attributes: [kv('service.name', 'refunds')] }, scopeSpans: [{ spans: big(i) }] }],
    }),
  );
  const poll = (ms: number) =>
    new Promise<number>((resolve, reject) => {
      const script = `const u=${JSON.stringify(new URL('/healthz', server.url).href)};let max=0,n=0;const end=Date.now()+${ms};
(async()=>{while(Date.now()<end){const t=performance.now();await (await fetch(u)).arrayBuffer();if(n++>0)max=Math.max(max,performance.now()-t);await new Promise(r=>setTimeout(r,10));}console.log(max)})()`;
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('exit', () => resolve(Number(out.trim())));
    });
  try {
    const idleMaxMs = await poll(1_500);
    const busy = poll(4_000);
    await new Promise((r) => setTimeout(r, 300)); // the poller is up
    const t0 = performance.now();
    for (const body of bodies) {
      const res = await fetch(new URL('/v1/traces', server.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-protobuf' },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`bench: a big export was answered ${res.status}`);
    }
    const exportMs = performance.now() - t0;
    const busyMaxMs = await busy;
    if (exportMs > 3_500)
      throw new Error(`bench: the big exports took ${exportMs.toFixed(0)} ms, past the poller's window`);
    say(
      `healthz: idle max ${idleMaxMs.toFixed(1)} ms; during ${exports} big exports (${exportMs.toFixed(0)} ms) max ${busyMaxMs.toFixed(1)} ms`,
    );
    return { busyMaxMs, idleMaxMs, exports, exportMs } satisfies HealthUnderLoadLine;
  } finally {
    await server.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
