import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { readLog } from '../../producers/logReader.ts';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { passkServer } from '../browser/processes.ts';

/**
 * A capped sampling policy under load, `kill -9` mid-load, restarted on the same port: 4 exporters send GenAI
 * traces (event time = now) and retry, with the same body, anything not answered. When every window has closed,
 * each window's kept traces must carry Horvitz–Thompson weights that add up to its candidates: at least every
 * acknowledged trace of the window (none lost with the killed process's memory), at most every trace sent.
 */
const TOKEN = 'cap-sigkill-token-0123456789';
const WINDOW_MS = 12_000;
const MAX = 4;
const dir = mkdtempSync(join(tmpdir(), 'passk-cap-kill-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a capped OTLP policy under kill -9', () => {
  it('loses no acknowledged candidate and no Horvitz–Thompson weight', async () => {
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ name: 'capped', rate: 1, cap: { max: MAX, windowMs: WINDOW_MS } }));
    const port = await freePort();
    const start = () =>
      passkServer(
        ['--data-dir', data, 'ingest', '--port', String(port), '--token', TOKEN, '--otlp-policy', policy, '--json'],
        (line) => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }).url : undefined),
      );
    let server = await start();
    const url = new URL('/v1/traces', server.value);

    /** trace id → [segment, event time]; and which were acknowledged. */
    const sent = new Map<string, [string, number]>();
    const acked = new Set<string>();
    let failures = 0;
    let stopAt = Infinity;
    const hardStop = Date.now() + 90_000;
    let n = 0;
    const client = async (c: number) => {
      while (Date.now() < stopAt && Date.now() < hardStop) {
        const segment = `seg-${c % 2}`;
        const at = Date.now();
        const ids = Array.from({ length: 5 }, () => (++n).toString(16).padStart(32, '0'));
        for (const id of ids) sent.set(id, [segment, at]);
        const body = JSON.stringify({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: ids.map((traceId) => ({
                    traceId,
                    spanId: traceId.slice(16),
                    name: 'invoke_agent',
                    endTimeUnixNano: String(BigInt(at) * 1_000_000n),
                    attributes: [
                      { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
                      { key: 'passk.segment', value: { stringValue: segment } },
                    ],
                  })),
                },
              ],
            },
          ],
        });
        for (;;) {
          if (Date.now() > hardStop) throw new Error('an export was never acknowledged');
          try {
            const res = await fetch(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
              body,
              signal: AbortSignal.timeout(10_000),
            });
            if (res.status === 200) {
              expect(await res.json()).toEqual({});
              for (const id of ids) acked.add(id);
              break;
            }
            await res.arrayBuffer();
          } catch {
            // refused or reset while the server is down: the same body again
          }
          failures++;
          await sleep(100);
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));
    await sleep(3_000);
    const beforeKill = acked.size;
    server.child.kill('SIGKILL');
    await new Promise((r) => server.child.once('close', r));
    server = await start();
    stopAt = Date.now() + 2_000;
    await load;
    // Every window closes on the clock (1 s ticks) once its end has passed.
    await sleep(WINDOW_MS + 3_000);
    await server.stop();
    expect(beforeKill).toBeGreaterThan(0);
    expect(failures).toBeGreaterThan(0);

    const log = await createEmbeddedEventLog({ dataDir: data });
    const kept = new Map<string, TraceSampled>();
    try {
      await readLog(log, { topics: ['passk.traces'] }, (e) => kept.set(e.event.event_id, e.event as TraceSampled));
    } finally {
      await log.close();
    }
    const windowOf = (segment: string, at: number) => `${segment}/${Math.floor(at / WINDOW_MS)}`;
    const weights = new Map<string, number>();
    const keptIds = new Set<string>();
    for (const t of kept.values()) {
      expect(sent.has(t.trace_id), `kept ${t.trace_id} was never sent`).toBe(true);
      expect(keptIds.has(t.trace_id), `${t.trace_id} kept twice`).toBe(false);
      keptIds.add(t.trace_id);
      const w = windowOf(t.segment, t.occurred_at);
      weights.set(w, (weights.get(w) ?? 0) + 1 / t.sampling.probability);
    }
    const count = (ids: Iterable<string>) => {
      const m = new Map<string, number>();
      for (const id of ids) {
        const [segment, at] = sent.get(id)!;
        m.set(windowOf(segment, at), (m.get(windowOf(segment, at)) ?? 0) + 1);
      }
      return m;
    };
    const ackedIn = count(acked);
    const sentIn = count(sent.keys());
    for (const [w, a] of ackedIn) {
      const total = weights.get(w) ?? 0;
      expect(Math.round(total), `window ${w}: weights ${total}, ${a} acknowledged`).toBeGreaterThanOrEqual(a);
      expect(Math.round(total)).toBeLessThanOrEqual(sentIn.get(w)!);
    }
    process.stderr.write(
      `cap sigkill: ${acked.size} acknowledged (${beforeKill} before the kill) in ${ackedIn.size} windows, ` +
        `${keptIds.size} kept, ${failures} failed exports retried\n`,
    );
  }, 240_000);
});
