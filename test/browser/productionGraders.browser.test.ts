import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium.ts';
import { firstRender, pageLog } from './firstRender.ts';
import { passk, passkServer, SCREENSHOTS } from './processes.ts';

/**
 * The Production view with two online graders on the same traces: one grader at a time (a picker), never their
 * verdicts on one line, and the traces no grader judged beside them as a count, not as a row. Five traces of one hour,
 * sampled at rate 1 (each weighs 1), so every expected number below is counted by hand from the table:
 *
 *   trace   exact   judge
 *   t1      pass    pass
 *   t2      pass    fail
 *   t3      fail    fail
 *   t4      —       —        (no verdict at all)
 *   t5      pass    —
 *
 * exact judged t1 t2 t3 t5: 4 sampled, 4 graded, 3 passed → 0.75. judge judged t1 t2 t3: 3, 3, 1 passed → 1/3.
 * One trace (t4) no grader judged.
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  createRange(): {
    selectNodeContents(n: unknown): void;
    getClientRects(): Iterable<{ width: number; bottom: number }>;
  };
};
declare const location: { hash: string };

const HOUR = 3_600_000;
// two hours ago, on the hour: inside the trace retention, and a window the processors have closed by the last trace
const H0 = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
const TRACES = [
  { id: 't1', exact: true, judge: true },
  { id: 't2', exact: true, judge: false },
  { id: 't3', exact: false, judge: false },
  { id: 't4' },
  { id: 't5', exact: true },
];

let dir: string;
let server: Awaited<ReturnType<typeof passkServer>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const pageErrors: string[] = [];

type Shown = { grader: string | null; version: string | null; start: string | null; sampled: string | null };
const windowRows = (): Promise<(Shown & { graded: string | null; rate: string | null })[]> =>
  page.locator('[data-testid="windows"] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      grader: tr.getAttribute('data-grader'),
      version: tr.getAttribute('data-version'),
      start: tr.getAttribute('data-start'),
      sampled: tr.getAttribute('data-sampled'),
      graded: tr.getAttribute('data-graded'),
      rate: tr.getAttribute('data-pass-rate'),
    })),
  );

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-graders-'));
  const file = join(dir, 'traces.jsonl');
  writeFileSync(
    file,
    TRACES.map((t, i) =>
      JSON.stringify({
        trace_id: t.id,
        agent_version: 'v1',
        segment: 'all',
        input: `question ${i}`,
        output: `answer ${i}`,
        verdicts: [
          ...(t.exact === undefined ? [] : [{ grader: 'exact', passed: t.exact }]),
          ...(t.judge === undefined ? [] : [{ grader: 'judge', passed: t.judge }]),
        ],
        occurred_at: H0 + (i + 1) * 60_000,
      }),
    ).join('\n') + '\n',
  );
  const data = join(dir, 'data');
  const sampled = await passk(['--data-dir', data, 'sample', file, '--rate', '1', '--seed', '1', '--json']);
  if (sampled.code !== 0) throw new Error(`passk sample exited ${sampled.code}\n${sampled.stderr}`);
  const processed = await passk(['--data-dir', data, 'process', '--until-caught-up']);
  if (processed.code !== 0) throw new Error(`passk process exited ${processed.code}\n${processed.stderr}`);
  server = await passkServer(['--data-dir', data, 'serve', '--port', '0', '--json'], (line) =>
    line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
  );
  // a zone 5 h 30 min from UTC: every time the view shows must still be UTC
  browser = await launchChromium({ width: 1440, height: 900 }, 'Asia/Kolkata');
  page = browser.page;
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const log = pageLog(page);
  await page.goto(`${server.value}#/production?size=1h`);
  await firstRender(page, 'production', log);
}, 400_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Production view carries the grader', () => {
  it('offers the two graders (not "none"), shows the first, and counts the trace no grader judged', async () => {
    const pills = await page
      .locator('[data-testid="graders"] a')
      .evaluateAll((as) => as.map((a) => a.getAttribute('data-grader')));
    expect(pills).toEqual(['exact', 'judge']);
    expect(await page.getAttribute('[data-testid="graders"]', 'data-grader')).toBe('exact');
    expect(await page.getAttribute('[data-testid="unjudged"]', 'data-traces')).toBe('1');
    expect(await windowRows()).toEqual([
      { grader: 'exact', version: 'v1', start: String(H0), sampled: '4', graded: '4', rate: '0.75' },
    ]);
  });

  it("shows the other grader's own numbers when it is picked", async () => {
    // the pill's own link renders the view again: wait for that render, not for a hash change of our own (the
    // pill's hash may already be the one we would set, and setting the same hash again renders nothing)
    const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
    await page.locator('[data-testid="graders"] a[data-grader="judge"]').click();
    await page.waitForFunction(
      (b) =>
        location.hash.includes('grader=judge') &&
        document.body.dataset.view === 'production' &&
        Number(document.body.dataset.renders ?? 0) > b,
      before,
      { timeout: 90_000 },
    );
    expect(await page.getAttribute('[data-testid="graders"]', 'data-grader')).toBe('judge');
    const rows = await windowRows();
    expect(rows.map(({ rate: _, ...r }) => r)).toEqual([
      { grader: 'judge', version: 'v1', start: String(H0), sampled: '3', graded: '3' },
    ]);
    expect(Number(rows[0]!.rate)).toBeCloseTo(1 / 3, 12);
    expect(pageErrors).toEqual([]);
  });

  it("keeps a window's time to two lines at 390 px (the date, then the times; it was six lines)", async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
    await page.setViewportSize({ width: 390, height: 900 });
    await page.waitForFunction(
      (b) => Number(document.body.dataset.renders ?? 0) > b && document.body.dataset.loading === 'false',
      before,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'production-windows-390.png'), fullPage: true });
    const cell = page.locator('[data-testid="windows"] td[data-field="window"]').first();
    // the lines a cell's text takes: the distinct bottoms of its line boxes
    const lines = await cell.evaluate((td) => {
      const range = document.createRange();
      range.selectNodeContents(td);
      return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.bottom))).size;
    });
    expect(lines).toBeLessThanOrEqual(2);
    const start = new Date(H0).toISOString();
    const end = new Date(H0 + HOUR).toISOString();
    // between 01:00 and 02:00 UTC the window is 23:00–00:00 of the day before: its end names its own date
    const until =
      end.slice(0, 10) === start.slice(0, 10) ? end.slice(11, 16) : `${end.slice(5, 10)} ${end.slice(11, 16)}`;
    expect(await cell.textContent()).toBe(`${start.slice(0, 10)} ${start.slice(11, 16)}–${until}`);
    expect(await page.textContent('[data-testid="windows"] thead')).toContain('window (UTC)');
    // the chart of one window spans hours around it, not years (uPlot widened a single instant to 2027–2029)
    const [min, max] = (await page.getAttribute('[aria-label="production pass rate by window"]', 'data-x-range'))!
      .split(',')
      .map(Number);
    expect(max! - min!).toBeLessThanOrEqual(2 * 3600);
    expect(min! * 1000).toBeLessThanOrEqual(H0);
    expect(max! * 1000).toBeGreaterThanOrEqual(H0);
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it("names the chart's times in UTC in a browser 5 h 30 min east of it (uPlot's default is the local zone)", async () => {
    expect(await page.evaluate(() => new Date(0).getTimezoneOffset())).toBe(-330);
    const chart = page.locator('[aria-label="production pass rate by window"]');
    const over = chart.locator('.u-over');
    const x = chart.locator('.u-legend .u-series').first();
    const at = new Date(H0 + HOUR).toISOString();
    // one window alone is drawn at the middle of an hour either side of it; hover() waits for the plot and points
    // at its centre. A live render (the last test's resize) can replace the plot under the pointer, so each poll
    // hovers again and reads the legend in the same step. A window's point is its end.
    await expect
      .poll(
        async () => {
          await over.hover();
          return [await x.locator('.u-label').textContent(), await x.locator('.u-value').textContent()];
        },
        { timeout: 30_000 },
      )
      .toEqual(['window end (UTC)', `${at.slice(0, 10)} ${at.slice(11, 16)}`]);
  });
});
