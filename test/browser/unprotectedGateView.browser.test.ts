import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import type { GateEvaluated, StabilityClass } from '../../schemas/events/index.ts';
import { oneOfEach } from '../helpers/events.ts';
import { launchChromium } from './chromium.ts';
import { passkServer, SCREENSHOTS } from './processes.ts';

/**
 * The Gates view, in Chromium, over `passk serve` (the processors store the verdict, the store serves it): a verdict
 * whose must-not-break rows the baseline does not get right every time (status `not_covered`) says, under the
 * verdict, that those rows are not protected, naming each with the baseline's class and counts, each a chip that
 * opens its attempts; `passk gate` warns of the same rows. A verdict without such rows says nothing of the kind.
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const location: { hash: string };

const dataDir = mkdtempSync(join(tmpdir(), 'passk-unprotected-gate-view-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const side = (cls: StabilityClass, c: number) => ({ class: cls, c, n: 5 });
const row = (row_id: string, b: ReturnType<typeof side>, status: 'ok' | 'not_covered') => ({
  suite: 'refunds',
  dataset_version: 'v2',
  row_id,
  baseline: b,
  candidate: side('stable_correct', 5),
  status,
  outcome: null,
});

describe('the Gates view of a gate with must-not-break rows it cannot protect', () => {
  it('names the rows under the verdict, each a link to its attempts', async () => {
    const log = await openEventLog(PasskConfig.parse({ dataDir }));
    const base: GateEvaluated = {
      ...oneOfEach().GateEvaluated,
      schema_version: 2,
      verdict: 'pass',
      reasons: [
        { rule: 'must_not_break_stable_correct', passed: true, detail: 'all 1 stable-correct rows held', rows: [] },
      ],
    };
    const at = Date.now() - 60_000;
    try {
      await log.publisher.publish([
        {
          ...base,
          event_id: '01KGATEMNB00000000000000F1',
          occurred_at: at,
          gate_id: 'gate-covered',
          candidate: 'v1',
          must_not_break: [row('refund-7', side('stable_correct', 5), 'ok')],
        },
        {
          ...base,
          event_id: '01KGATEMNB00000000000000A2',
          occurred_at: at + 1_000,
          gate_id: 'gate-unprotected',
          candidate: 'v2',
          must_not_break: [
            row('refund-7', side('stable_correct', 5), 'ok'),
            row('refund-12', side('flip', 3), 'not_covered'),
            row('refund-40', side('stable_wrong', 0), 'not_covered'),
          ],
        },
      ]);
    } finally {
      await log.close();
    }
    const server = await passkServer(['--data-dir', dataDir, 'serve', '--port', '0', '--json'], (line) =>
      line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    const browser = await launchChromium({ width: 1440, height: 900 });
    try {
      const url = server.value;
      for (let until = Date.now() + 90_000; ;) {
        const gates = (await (await fetch(`${url}api/gates`)).json().catch(() => [])) as unknown[];
        if (Array.isArray(gates) && gates.length === 2) break;
        if (Date.now() > until) throw new Error('the processors did not fill the store');
        await new Promise((r) => setTimeout(r, 250));
      }
      const { page } = browser;
      const show = async (gate: string) => {
        await page.goto(`${url}#/gates?gate=${gate}`);
        await page.waitForFunction(
          () => document.body.dataset.view === 'gates' && document.body.dataset.loading === 'false',
        );
        expect(await page.getAttribute('[data-testid="current-gate"]', 'data-gate')).toBe(gate);
      };
      await show('gate-unprotected');
      const warning = page.locator('[data-testid="unprotected"]');
      expect(await warning.count(), 'a warning under the verdict').toBe(1);
      expect(await warning.locator('p.warn').textContent()).toBe(
        '2 must-not-break rows are not protected: the baseline is not stable-correct on them, so no rule binds. ' +
          'Fix the baseline or the rows before trusting the gate with them.',
      );
      expect(await warning.locator('button.chip').allTextContents()).toEqual([
        'refund-12 (flip 3/5)',
        'refund-40 (stable-wrong 0/5)',
      ]);
      expect(await warning.locator('a.open-rows').getAttribute('href')).toBe(
        '#/rows?suite=refunds&dataset_version=v2&baseline=agent-1.0.0&candidate=v2&ids=refund-12%2Crefund-40',
      );
      mkdirSync(SCREENSHOTS, { recursive: true });
      for (const width of [1440, 390]) {
        if (width !== page.viewportSize()?.width) {
          const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
          await page.setViewportSize({ width, height: 900 });
          await page.waitForFunction(
            (b) => Number(document.body.dataset.renders ?? 0) > b && document.body.dataset.loading === 'false',
            before,
          );
        }
        await page.screenshot({ path: join(SCREENSHOTS, `gates-unprotected-${width}.png`), fullPage: true });
        const sizes = await page.evaluate(() => ({
          page: document.documentElement.scrollWidth,
          screen: document.documentElement.clientWidth,
        }));
        expect(sizes.page, `the Gates view at ${width} px`).toBeLessThanOrEqual(sizes.screen);
      }
      // a row's chip opens its attempts side by side in the row explorer, among the unprotected rows
      await warning.locator('button.chip[data-row="refund-12"]').click();
      await page.waitForFunction(
        () => document.body.dataset.view === 'rows' && document.body.dataset.loading === 'false',
      );
      const hash = new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]);
      expect(Object.fromEntries(hash)).toMatchObject({
        suite: 'refunds',
        dataset_version: 'v2',
        baseline: 'agent-1.0.0',
        candidate: 'v2',
        ids: 'refund-12,refund-40',
        row: 'refund-12',
      });
      await show('gate-covered');
      expect(await page.locator('[data-testid="unprotected"]').count()).toBe(0);
      // the history says which verdicts had rows they could not protect
      expect(await page.locator('tr[data-gate="gate-unprotected"] td.verdict-cell').textContent()).toBe(
        'PASS · 2 not protected',
      );
      expect(await page.locator('tr[data-gate="gate-covered"] td.verdict-cell').textContent()).toBe('PASS');
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 240_000);
});
