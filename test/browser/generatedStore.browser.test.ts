import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paint, VIEWS } from '../../bench/firstPaint.ts';
import { generateStore } from '../../bench/generatedStore.ts';
import { launchChromium } from './chromium.ts';
import { pageLog } from './firstRender.ts';
import { passkServer } from './processes.ts';

/**
 * Every view over `passk serve --no-process` on a generated store (issue #32; bench/generatedStore.ts: ROWS rows × 2
 * versions × 5 attempts written by SQL, with the row states, summaries, runs, a dataset and a gate that go with
 * them), in Chromium: each paints without an error, and the Rows view holds one page of rows whatever the scope's
 * size. How fast they paint is `npm run bench -- firstpaint`'s, at 1M trials. ROWS: the Rows view of all of them
 * would be ~25 elements a row, 250k for the scope; one page is 200 rows.
 */
declare const document: { getElementsByTagName(name: string): { length: number } };

const ROWS = 5_000;
const PAGE = 200;

let dir: string;
let server: Awaited<ReturnType<typeof passkServer>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let log: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-generated-'));
  await generateStore({ dataDir: dir, rows: ROWS });
  server = await passkServer(['--data-dir', dir, 'serve', '--no-process', '--port', '0', '--json'], (line) =>
    line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
  );
  browser = await launchChromium();
  log = pageLog(browser.page);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`the dashboard over a generated store of ${(ROWS * 10).toLocaleString('en')} trials`, () => {
  it.each(VIEWS.map((v) => [v.view, v]))('paints the %s view without an error', async (_, { view, hash }) => {
    log.length = 0; // this view's errors only: one view's error failed every view after it
    const ms = await paint(browser.page, server.value, view, hash);
    console.log(`${view}: first render ${ms.toFixed(0)} ms`);
    expect(await browser.page.locator('[data-testid="param-warning"]').count()).toBe(0);
    expect(log.filter((l) => !l.startsWith('requestfailed'))).toEqual([]);
  });

  it('puts one page of rows in the DOM, and counts them all', async () => {
    const rows = VIEWS.find((v) => v.view === 'rows')!;
    await paint(browser.page, server.value, rows.view, rows.hash);
    const page = browser.page;
    const shown = await page
      .locator('[data-testid="explorer"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-row') ?? ''));
    expect(shown).toHaveLength(PAGE);
    expect(new Set(shown).size).toBe(PAGE);
    expect(await page.getAttribute('[data-testid="row-count"]', 'data-count')).toBe(String(ROWS));
    expect(await page.textContent('[data-testid="pager"]')).toContain(`rows 1–${PAGE}`);
    const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
    console.log(`the Rows view: ${elements} elements for ${ROWS} rows`);
    expect(elements).toBeLessThan(PAGE * 40);
  });
});
