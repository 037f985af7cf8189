import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardData } from '../../web/data.ts';
import { createMemoryDashboardData } from '../../web/memoryData.ts';
import { createDashboardServer, type DashboardServer } from '../../web/server.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { launchChromium } from './chromium.ts';

/**
 * The Rows view at a size no page should hold (issue #32: 20k rows put 380k nodes in the DOM): a scope of ROWS rows
 * × 2 versions × 3 attempts served in-process (the memory data port; the store's is covered by the explorer test),
 * in Chromium. The table holds one page whatever the scope's size; a deep link opens on its row's page, and j / k
 * cross into the next page.
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  getElementsByTagName(name: string): { length: number };
};
declare const location: { hash: string };

const ROWS = 3_000;
const PAGE = 200;
const id = (i: number) => `r${String(i).padStart(5, '0')}`;

let data: DashboardData;
let server: DashboardServer;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;

beforeAll(async () => {
  const events = Array.from({ length: ROWS }, (_, i) =>
    ['v1', 'v2'].flatMap((version) =>
      [0, 1, 2].map((attempt) =>
        trial({ row: id(i), version, attempt, passed: (i + attempt + (version === 'v2' ? 1 : 0)) % 4 !== 0 }),
      ),
    ),
  ).flat();
  data = createMemoryDashboardData(events).data;
  server = await createDashboardServer({ data, port: 0 });
  browser = await launchChromium();
  page = browser.page;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const open = async (hash: string, view = 'rows') => {
  const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0)).catch(() => 0);
  await page.goto(`${server.url}${hash}`);
  await page.waitForFunction(
    ([v, b]) => document.body.dataset.view === v && Number(document.body.dataset.renders ?? 0) > b,
    [view, before] as const,
  );
};
const shownIds = () =>
  page
    .locator('[data-testid="explorer"] tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-row') ?? ''));

describe(`the Rows view over ${ROWS.toLocaleString('en')} rows`, () => {
  it('puts one page of rows in the DOM, and counts them all', async () => {
    await open('#/rows?suite=refunds&dataset_version=d1&baseline=v1&candidate=v2');
    expect(await shownIds()).toEqual(Array.from({ length: PAGE }, (_, i) => id(i)));
    expect(await page.getAttribute('[data-testid="row-count"]', 'data-count')).toBe(String(ROWS));
    // every row on the page would be ~25 nodes each: 75k for the scope; one page is a few thousand
    const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    expect(nodes).toBeLessThan(PAGE * 40);
    expect(await page.textContent('[data-testid="pager"]')).toContain(`rows 1–${PAGE}`);
  });

  it('opens a deep-linked row on its page, and j crosses into the next page', async () => {
    const last = 2 * PAGE - 1; // the last row of the second page
    await open(`#/rows?suite=refunds&dataset_version=d1&baseline=v1&candidate=v2&row=${id(last)}`);
    expect(await page.getAttribute('[data-testid="attempt-diff"]', 'data-row')).toBe(id(last));
    expect((await shownIds())[0]).toBe(id(PAGE));
    const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
    await page.keyboard.press('j');
    await page.waitForFunction((b) => Number(document.body.dataset.renders ?? 0) > b, before);
    expect(await page.getAttribute('[data-testid="attempt-diff"]', 'data-row')).toBe(id(last + 1));
    expect((await shownIds())[0]).toBe(id(2 * PAGE));
    expect(await page.evaluate(() => location.hash)).toContain(`row=${id(last + 1)}`);
  });

  it('lists at most 200 rows of each Compare list, counting the rest (the answer carries 200)', async () => {
    const scope = { suite: 'refunds', dataset_version: 'd1', baseline: 'v1', candidate: 'v2' };
    const lost = (await data.compare(scope))!.lost_stable_correct;
    expect(lost.length).toBeGreaterThan(PAGE);
    await open(`#/compare?${new URLSearchParams(scope)}`, 'compare');
    const items = page.locator('[data-testid="regressed-list"] li[data-row]');
    expect(await items.count()).toBe(PAGE);
    expect(await page.textContent('[data-testid="regressed-list"] [data-testid="more-rows"]')).toBe(
      `… and ${lost.length - PAGE} more, counted here and not listed`,
    );
  });
});
