import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { oneOfEach } from '../helpers/events.ts';
import { launchChromium } from './chromium.ts';
import { passkServer } from './processes.ts';

/**
 * The Gates view, in Chromium, over `passk serve`: an adaptive candidate's verdict (GateEvaluated.adaptive, as the
 * processors write it when the candidate ran `passk run --adaptive`) says what the decision took against fixed k;
 * a verdict without it says nothing of the kind.
 */
declare const document: { body: { dataset: Record<string, string | undefined> } };

const dataDir = mkdtempSync(join(tmpdir(), 'passk-adaptive-gate-view-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the Gates view of an adaptive candidate', () => {
  it('says "decided after N attempts (P planned + C confirmation; fixed k would have used M)"', async () => {
    const log = await openEventLog(PasskConfig.parse({ dataDir }));
    const base = oneOfEach().GateEvaluated;
    const at = Date.now() - 60_000;
    try {
      await log.publisher.publish([
        { ...base, event_id: '01KADAPT0000000000000000F1', occurred_at: at, gate_id: 'gate-fixed', candidate: 'v1' },
        {
          ...base,
          event_id: '01KADAPT0000000000000000A2',
          occurred_at: at + 1_000,
          gate_id: 'gate-adaptive',
          candidate: 'v2',
          adaptive: { attempts: 27, confirmations: 3, rows: 6, max_k: 6 },
        },
      ]);
    } finally {
      await log.close();
    }
    const server = await passkServer(['--data-dir', dataDir, 'serve', '--port', '0', '--json'], (line) =>
      line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    const browser = await launchChromium();
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
      await show('gate-adaptive');
      // the confirmation attempts said apart: the candidate's adaptive run printed its own 24 only
      expect(await page.locator('[data-testid="adaptive-cost"]').textContent()).toBe(
        'decided after 27 attempts (24 planned + 3 confirmation; fixed k would have used 36: 6 rows × 6)',
      );
      await show('gate-fixed');
      expect(await page.locator('[data-testid="adaptive-cost"]').count()).toBe(0);
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 240_000);
});
