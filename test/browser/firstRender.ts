import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { droppedByNetworkChange } from './chromium.ts';
import { SCREENSHOTS } from './processes.ts';

declare const document: { body: { dataset: Record<string, string | undefined> } };
declare const location: { hash: string };

/**
 * What a page reports going wrong (errors, console errors, failed requests), kept for a view that never renders. A
 * request the machine's network change dropped is not the page's error: it is asked again (droppedByNetworkChange).
 */
export const pageLog = (page: Page): string[] => {
  const log: string[] = [];
  page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  page.on(
    'console',
    (m) => void (m.type() === 'error' && !droppedByNetworkChange(m.text()) && log.push(`console: ${m.text()}`)),
  );
  page.on('requestfailed', (r) => log.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  return log;
};

/**
 * Waits for the dashboard's first render of `view` after a page load. A first load waits for `passk serve`'s first
 * answers, which on a loaded 2-core machine can take longer than Playwright's 30 s default (CI at load 10:
 * productionGraders timed out here once, as truthfulViews had in stop 36): up to `timeoutMs`, and a first render
 * slower than 30 s is printed with its time, so CI logs show how close it came. A view that never renders fails
 * with what the page was doing (its body's data attributes, the hash, its last errors) and a screenshot.
 */
export const firstRender = async (page: Page, view: string, log: readonly string[], timeoutMs = 120_000) => {
  const started = Date.now();
  await page
    .waitForFunction((v) => document.body.dataset.view === v, view, { timeout: timeoutMs })
    .catch(async (e: unknown) => {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, `stalled-${view}.png`) }).catch(() => undefined);
      const state = await page
        .evaluate(() => ({ ...document.body.dataset, hash: location.hash }))
        .catch((x: unknown) => String(x));
      throw new Error(
        `${String(e)}\nwaiting for the first render of ${view}; the page: ${JSON.stringify(state)}; ` +
          `what it reported: ${log.slice(-10).join(' | ') || 'nothing'}`,
      );
    });
  const ms = Date.now() - started;
  if (ms > 30_000) console.warn(`first render of ${view} took ${(ms / 1000).toFixed(1)} s`);
};
