/**
 * The HTTP ingest API's throughput against its tight baseline: `EventLog.publish` of the same events, in the
 * same batches, into the same kind of log (a fresh embedded log each run), in the same process and run.
 * The API does the baseline's work plus HTTP, gzip-free NDJSON parsing, zod validation and the answer, so the
 * baseline is a subset of it (bench/plausible.ts checks it is not slower).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../log/index.ts';
import { buildEvents, createIngestServer } from '../producers/ingest/index.ts';
import type { PasskEvent } from '../schemas/events/index.ts';

export interface IngestBenchOptions {
  /** Trials per run. @default 20000 */
  readonly n?: number;
  /** Trials per request (and per publish call of the baseline). @default 500 */
  readonly batch?: number;
  /** Concurrent clients of the second API line. @default 4 */
  readonly clients?: number;
  /** Alternating baseline / API rounds; the best of each is kept. @default 3 */
  readonly rounds?: number;
  readonly log?: (line: string) => void;
}

export interface IngestBenchLine {
  readonly name: string;
  readonly eventsPerSec: number;
  readonly baselinePerSec: number;
  readonly ratio: number;
  /** Same batching and one client at a time: the baseline is a subset of the work. */
  readonly subset: boolean;
}

const TOKEN = 'bench-ingest-token-0123456789';

const flatTrial = (i: number) => ({
  suite: 'bench',
  dataset_version: 'v1',
  row_id: `row-${i % 500}`,
  agent_version: 'agent-1',
  model: 'model-x',
  run_id: 'run-1',
  attempt: Math.floor(i / 500),
  output: `answer ${i}`,
  expected: 'answer',
  passed: i % 3 !== 0,
  latency_ms: 120,
});

const withLog = async <T>(fn: (log: Awaited<ReturnType<typeof createEmbeddedEventLog>>) => Promise<T>): Promise<T> => {
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-ingest-'));
  const log = await createEmbeddedEventLog({ dataDir: dir });
  try {
    return await fn(log);
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export const benchIngest = async (opts: IngestBenchOptions = {}): Promise<IngestBenchLine[]> => {
  const n = opts.n ?? 20_000;
  const batch = opts.batch ?? 500;
  const clients = opts.clients ?? 4;
  const rounds = opts.rounds ?? 3;
  const say = opts.log ?? (() => undefined);
  const items = Array.from({ length: n }, (_, i) => flatTrial(i));
  const bodies: string[] = [];
  for (let i = 0; i < n; i += batch)
    bodies.push(
      `${items
        .slice(i, i + batch)
        .map((t) => JSON.stringify(t))
        .join('\n')}\n`,
    );
  // The baseline's events are the ones the API builds from these items: same ids, same bytes.
  const built = await buildEvents(
    'trials',
    items.map((value, index) => ({ index, value })),
  );
  const events = built.map((b) => ('event' in b ? b.event : undefined)).filter((e): e is PasskEvent => !!e);
  if (events.length !== n) throw new Error(`bench: ${n - events.length} items did not validate`);

  const baseline = () =>
    withLog(async (log) => {
      const t0 = performance.now();
      for (let i = 0; i < n; i += batch) await log.publisher.publish(events.slice(i, i + batch));
      return (n / (performance.now() - t0)) * 1000;
    });

  const api = (concurrent: number) =>
    withLog(async (log) => {
      const server = await createIngestServer({ publisher: log.publisher, token: TOKEN, port: 0, maxInFlight: 64 });
      const url = new URL('/api/v1/trials', server.url);
      try {
        let next = 0;
        let accepted = 0;
        const client = async () => {
          while (next < bodies.length) {
            const body = bodies[next++]!;
            const res = await fetch(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
              body,
            });
            const answer = (await res.json()) as { accepted: number };
            if (res.status !== 200) throw new Error(`bench: the ingest API answered ${res.status}`);
            accepted += answer.accepted;
          }
        };
        const t0 = performance.now();
        await Promise.all(Array.from({ length: concurrent }, client));
        const ms = performance.now() - t0;
        if (accepted !== n) throw new Error(`bench: ${accepted} of ${n} accepted`);
        return (n / ms) * 1000;
      } finally {
        await server.close();
      }
    });

  let base = 0;
  let one = 0;
  let many = 0;
  for (let r = 0; r < rounds; r++) {
    base = Math.max(base, await baseline());
    one = Math.max(one, await api(1));
    many = Math.max(many, await api(clients));
    say(`ingest round ${r + 1}/${rounds}: publish ${Math.round(base)}/s, API ${Math.round(one)}/s (1 client)`);
  }
  return [
    {
      name: `ingest API, ${batch}-trial NDJSON requests, 1 client`,
      eventsPerSec: one,
      baselinePerSec: base,
      ratio: one / base,
      subset: true,
    },
    {
      name: `ingest API, ${batch}-trial NDJSON requests, ${clients} clients`,
      eventsPerSec: many,
      baselinePerSec: base,
      ratio: many / base,
      subset: false,
    },
  ];
};
