import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { IngestAnswer } from '../../producers/ingest/index.ts';
import { readLog } from '../../producers/logReader.ts';
import { passk, passkServer } from '../browser/processes.ts';

/**
 * A bounded load test on loopback: 8 clients post batches of trials to a real `passk ingest` (embedded log) and
 * retry, with the same body, on any failure. Mid-load the server is SIGKILLed and restarted on the same port.
 * Every acknowledged event must be on the log; an event appears twice on the log only when its batch was
 * retried (a request whose answer the kill cut off); the store, filled by `passk process`, counts each trial once.
 */
const TOKEN = 'sigkill-load-token-0123456789';
const CLIENTS = 8;
const BATCH = 40;
const dir = mkdtempSync(join(tmpdir(), 'passk-sigkill-'));
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

describe('ingest under load, SIGKILLed and restarted', () => {
  it('loses no acknowledged event and counts none twice', async () => {
    const port = await freePort();
    const start = () =>
      passkServer(['--data-dir', data, 'ingest', '--port', String(port), '--token', TOKEN, '--json'], (line) =>
        line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }).url : undefined,
      );
    let server = await start();
    const url = new URL('/api/v1/trials', server.value);

    const acked = new Set<string>();
    const sent = new Set<string>();
    let retriedBatches = 0;
    let answeredDuplicates = 0;
    let failures = 0;
    let stopAt = Infinity;
    const hardStop = Date.now() + 120_000;

    const client = async (c: number) => {
      for (let b = 0; Date.now() < stopAt && Date.now() < hardStop; b++) {
        const trials = Array.from({ length: BATCH }, (_, i) => ({
          suite: 'sigkill',
          dataset_version: 'v1',
          row_id: `c${c}-b${b}-i${i}`,
          agent_version: 'load-1',
          run_id: 'load',
          attempt: 0,
          passed: i % 4 !== 0,
        }));
        const body = trials.map((t) => JSON.stringify(t)).join('\n');
        for (const t of trials) sent.add(t.row_id);
        for (let attempt = 0; ; attempt++) {
          if (Date.now() > hardStop) throw new Error('load test: a batch was never acknowledged');
          try {
            const res = await fetch(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
              body,
              signal: AbortSignal.timeout(15_000),
            });
            if (res.status === 200) {
              const answer = (await res.json()) as IngestAnswer;
              expect(answer.accepted + answer.duplicates).toBe(BATCH);
              answeredDuplicates += answer.duplicates;
              for (const it of answer.items) if (it.status !== 'rejected') acked.add(it.event_id);
              if (attempt > 0) retriedBatches++;
              break;
            }
            expect([429, 503]).toContain(res.status);
            await res.arrayBuffer();
          } catch (e) {
            // Connection refused or reset while the server is down: retry the same body.
            if ((e as Error).name === 'AssertionError') throw e;
          }
          failures++;
          await sleep(100 + Math.random() * 200);
        }
      }
    };

    const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    await sleep(4_000);
    const beforeKill = acked.size;
    server.child.kill('SIGKILL');
    await new Promise((r) => server.child.once('close', r));
    server = await start();
    const afterRestart = acked.size;
    stopAt = Date.now() + 5_000;
    await load;
    await server.stop();

    // Load before the kill, across the restart, and after it.
    expect(beforeKill).toBeGreaterThan(CLIENTS * BATCH);
    expect(acked.size).toBeGreaterThan(afterRestart);
    expect(failures).toBeGreaterThan(0);

    // The log: every acknowledged event is there; only retried batches can have put an event there twice.
    const log = await createEmbeddedEventLog({ dataDir: data });
    const onLog = new Map<string, number>();
    try {
      await readLog(log, { topics: ['passk.trials'] }, (e) =>
        onLog.set(e.event.event_id, (onLog.get(e.event.event_id) ?? 0) + 1),
      );
    } finally {
      await log.close();
    }
    for (const id of acked) expect(onLog.has(id), `acknowledged ${id} is not on the log`).toBe(true);
    const twice = [...onLog.values()].filter((n) => n > 1).length;
    expect(twice).toBeLessThanOrEqual(retriedBatches * BATCH);
    expect([...onLog.values()].every((n) => n <= 2)).toBe(true);
    // Nothing on the log that no client sent (at most the batches cut off at the deadline are unacknowledged).
    expect(onLog.size).toBeGreaterThanOrEqual(acked.size);
    expect(onLog.size).toBeLessThanOrEqual(sent.size);

    // The store counts each trial once: passk process fills it, passk export reads it back.
    const processed = await passk(['--data-dir', data, 'process', '--until-caught-up']);
    expect(processed.code, processed.stderr).toBe(0);
    const exported = await passk(['--data-dir', data, 'export', 'trials', '--suite', 'sigkill']);
    expect(exported.code, exported.stderr).toBe(0);
    const rows = exported.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { row_id: string }).row_id);
    expect(new Set(rows).size).toBe(rows.length);
    expect(rows.length).toBe(onLog.size);
    expect(rows.every((r) => sent.has(r))).toBe(true);
    process.stderr.write(
      `sigkill load: ${acked.size} acknowledged (${beforeKill} before the kill), ${onLog.size} on the log, ` +
        `${twice} there twice from ${retriedBatches} retried batches, ${answeredDuplicates} answered duplicate, ` +
        `${rows.length} in the store\n`,
    );
  }, 300_000);
});
