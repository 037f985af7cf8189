import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { trace } from '../helpers/processorFixtures.ts';
import { launchChromium } from './chromium.ts';
import { passkServer } from './processes.ts';

/**
 * The page, in Chromium, over `passk serve` (which runs the processors): the Dead letters view lists real poison
 * records written to the log, with topic, partition, offset, reason and a preview of the bytes; the Production
 * view shows sampled and graded apart, "not graded" for a window without a verdict (never 0 %), and late traces.
 */
declare const document: { body: { dataset: Record<string, string | undefined> } };

const dataDir = mkdtempSync(join(tmpdir(), 'passk-dlq-view-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const H = 3_600_000;
const T0 = Math.floor(Date.now() / H) * H - 12 * H; // recent: raw traces older than the trace TTL are dropped

describe('the Dead letters and Production views', () => {
  it('list the poison records, and show sampled, graded, "not graded" and late', async () => {
    const log = await openEventLog(PasskConfig.parse({ dataDir }));
    const garbage = new Uint8Array([0xff, 0xfe, 0x7b, 0x22, 0x61, 0x22, 0x7d]);
    try {
      await log.publisher.publishRaw(TOPICS.trials, [
        { key: 'k', value: garbage },
        { key: 'k', value: new TextEncoder().encode('{"type":"TrialRecorded"}') },
      ]);
      const at = (hour: number, min: number) => T0 + hour * H + min * 60_000;
      await log.publisher.publish([
        trace({ at: at(1, 5), passed: true }),
        trace({ at: at(1, 10), passed: null }),
        trace({ at: at(2, 5), passed: null }),
        trace({ at: at(5, 0), passed: true }),
      ]);
      await log.publisher.publish([trace({ at: at(1, 40), passed: false })]); // late: hour 1 has closed
    } finally {
      await log.close();
    }
    const server = await passkServer(['--data-dir', dataDir, 'serve', '--port', '0', '--json'], (line) =>
      line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    const browser = await launchChromium();
    try {
      const url = server.value;
      for (const ready of [
        async () => ((await (await fetch(`${url}api/dead-letters`)).json()) as { total: number }).total === 2,
        async () =>
          ((await (await fetch(`${url}api/production`)).json()) as { windows: { late: number | null }[] }).windows.some(
            (w) => w.late === 1,
          ),
      ])
        for (let until = Date.now() + 90_000; !(await ready().catch(() => false));) {
          if (Date.now() > until) throw new Error('the processors did not fill the store');
          await new Promise((r) => setTimeout(r, 250));
        }
      const { page } = browser;
      await page.goto(`${url}#/deadletters`);
      await page.waitForFunction(
        () => document.body.dataset.view === 'deadletters' && document.body.dataset.loading === 'false',
      );
      const rows = page.locator('[data-testid="dead-letters"] tbody tr');
      expect(await rows.count()).toBe(2);
      const cells = await rows.evaluateAll((trs) =>
        trs.map((tr) => ({
          topic: tr.getAttribute('data-topic'),
          offset: tr.getAttribute('data-offset'),
          reason: tr.querySelector('[data-field="reason"]')?.textContent ?? '',
          preview: tr.querySelector('[data-field="preview"]')?.textContent ?? '',
        })),
      );
      expect(cells.map((c) => c.topic)).toEqual([TOPICS.trials, TOPICS.trials]);
      expect(cells.map((c) => c.offset).sort()).toEqual(['0', '1']);
      expect(cells.find((c) => c.offset === '0')).toMatchObject({ preview: '··{"a"}' });
      expect(cells.find((c) => c.offset === '0')!.reason).toMatch(/undecodable/);
      expect(cells.find((c) => c.offset === '1')!.reason).toMatch(/schema/);
      expect(await page.locator('[data-testid="dead-letter-counts"]').textContent()).toMatch(/2 log records/);

      await page.goto(`${url}#/production?size=1h`);
      await page.waitForFunction(
        () => document.body.dataset.view === 'production' && document.body.dataset.loading === 'false',
      );
      const windows = await page.locator('[data-testid="windows"] tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({
          start: Number(tr.getAttribute('data-start')),
          sampled: tr.querySelector('[data-field="sampled"]')?.textContent,
          graded: tr.querySelector('[data-field="graded"]')?.textContent,
          rate: tr.querySelector('[data-field="pass-rate"]')?.textContent,
          late: tr.querySelector('[data-field="late"]')?.textContent,
        })),
      );
      expect(windows.find((w) => w.start === T0 + H)).toMatchObject({
        sampled: '2',
        graded: '1',
        rate: '100.0%',
        late: '1',
      });
      expect(windows.find((w) => w.start === T0 + 2 * H)).toMatchObject({
        sampled: '1',
        graded: '0',
        rate: 'not graded',
        late: '0',
      });
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 240_000);
});
