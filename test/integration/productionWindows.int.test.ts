import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { openStore } from '../../deploy/store.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import { trace } from '../helpers/processorFixtures.ts';

/**
 * The production numbers the dashboard shows, from traces through the real processors (embedded log) into chDB:
 * sampled and graded are counted apart, a window without a verdict has no pass rate (not 0 %), and a late trace
 * (after its window closed) is stored and counted late, also when it is the first of its window.
 */
const H = 3_600_000;
// recent: raw traces older than the trace TTL are dropped by the store
const T0 = Math.floor(Date.now() / H) * H - 24 * H;
const dataDir = mkdtempSync(join(tmpdir(), 'passk-prodwin-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('production windows on the dashboard', () => {
  it('counts sampled and graded apart, leaves an ungraded window without a rate, and keeps late traces', async () => {
    const config = PasskConfig.parse({ dataDir });
    const log = await openEventLog(config);
    const at = (hour: number, min: number) => T0 + hour * H + min * 60_000;
    try {
      // one fingerprint: one partition, so one watermark orders them all
      await log.publisher.publish([
        trace({ at: at(1, 5), passed: true }),
        trace({ at: at(1, 10), passed: null }),
        trace({ at: at(1, 15), passed: null }),
        trace({ at: at(2, 5), passed: null }),
        trace({ at: at(2, 10), passed: null }),
        trace({ at: at(5, 0), passed: true }), // the watermark passes hours 0–3
      ]);
      await log.publisher.publish([
        trace({ at: at(1, 40), passed: false }), // late for hour 1, which is closed
        trace({ at: at(0, 30), passed: false }), // late, and the first trace of hour 0
      ]);
      const run = await startProcessors(config, { log, untilCaughtUp: true, maxWaitMs: 1 });
      await run.done;
    } finally {
      await log.close();
    }

    const store = await openStore(config, { migrate: false });
    try {
      const prod = await clickhouseDashboardData(store.client).production();
      const hourly = (hour: number) =>
        prod.windows.find((w) => w.size === '1h' && w.start === T0 + hour * H && w.agent_version === 'v1');
      expect(hourly(1)).toMatchObject({ traces: 3, graded: 1, pass_rate: 1, late: 1 });
      expect(hourly(2)).toMatchObject({ traces: 2, graded: 0, pass_rate: null, interval: null, late: 0 });
      expect(hourly(0)).toMatchObject({ traces: 0, graded: 0, pass_rate: null, late: 1 });
      const stored = await store.client.query({
        query: 'SELECT count() AS n FROM traces FINAL',
        format: 'JSONEachRow',
      });
      expect(await stored.json()).toEqual([{ n: 8 }]); // the late traces are stored like the rest
    } finally {
      await store.close();
    }
  }, 120_000);
});
