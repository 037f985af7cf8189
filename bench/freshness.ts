import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { PasskConfig } from '../deploy/config.ts';
import { startProcessors } from '../deploy/processors.ts';
import { openStore, type Store } from '../deploy/store.ts';
import { createEmbeddedEventLog } from '../log/embedded/embeddedLog.ts';
import { syntheticTrials } from './processors.ts';

/**
 * End-to-end freshness (issue #14, part 4): trials published at a steady rate into the embedded log
 * while `startProcessors` runs with the chDB store; each trial's freshness is the wall time from its
 * publish call to the resolution of the store insert that holds its row in `trials` (durable and
 * queryable). The store's bulk insert is wrapped (the `openStore` hook) to read the event ids of each
 * insert's body. Publishing is in ticks of 50 ms; p50/p95/p99 over every trial.
 */
export interface Freshness {
  readonly rate: number;
  readonly events: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  /** Trials whose row never reached the store within the run (should be 0). */
  readonly missing: number;
}

const pct = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const EVENT_ID = /"event_id":"([0-9A-Z]{26})"/;

export async function benchFreshness(o: {
  rate: number;
  seconds: number;
  batchWindowMs?: number;
  log?: (line: string) => void;
}): Promise<Freshness> {
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-fresh-'));
  const config = PasskConfig.parse({ dataDir: dir, batchWindowMs: o.batchWindowMs ?? 500 });
  const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
  const publishedAt = new Map<string, number>();
  const storedAt = new Map<string, number>();
  const watched = async (c: PasskConfig): Promise<Store> => {
    const store = await openStore(c);
    return {
      ...store,
      insertJsonRows: async (table, body, settings) => {
        await store.insertJsonRows(table, body, settings);
        if (table !== 'trials') return;
        const now = performance.now();
        for (const line of body.toString('utf8').split('\n')) {
          const id = EVENT_ID.exec(line)?.[1];
          if (id && !storedAt.has(id)) storedAt.set(id, now);
        }
      },
    };
  };
  try {
    const run = await startProcessors(config, { log, openStore: watched });
    await run.caughtUp(); // joined and idle: steady state, not start-up, is measured
    const total = Math.round(o.rate * o.seconds);
    const events = [...syntheticTrials({ events: total, rows: Math.max(1, Math.ceil(total / 12)), versions: 4 })];
    const tickMs = 50;
    const perTick = (o.rate * tickMs) / 1000;
    const t0 = performance.now();
    for (let sent = 0, tick = 1; sent < events.length; tick++) {
      const upTo = Math.min(events.length, Math.round(tick * perTick));
      const part = events.slice(sent, upTo);
      const at = performance.now();
      for (const e of part) publishedAt.set(e.event_id, at);
      if (part.length) await log.publisher.publish(part);
      sent = upTo;
      const wait = t0 + tick * tickMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
    await run.caughtUp();
    run.stop();
    await run.done;
    const lat = [...publishedAt].flatMap(([id, at]) => {
      const s = storedAt.get(id);
      return s === undefined ? [] : [(s - at) / 1000];
    });
    lat.sort((a, b) => a - b);
    const f = {
      rate: o.rate,
      events: total,
      p50: pct(lat, 0.5),
      p95: pct(lat, 0.95),
      p99: pct(lat, 0.99),
      missing: total - lat.length,
    };
    o.log?.(
      `freshness at ${o.rate} ev/s (${total} trials): p50 ${f.p50.toFixed(2)} s, p95 ${f.p95.toFixed(2)} s, p99 ${f.p99.toFixed(2)} s, missing ${f.missing}`,
    );
    return f;
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
