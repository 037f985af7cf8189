import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { createMemoryDashboardData } from '../../web/memoryData.ts';
import { createDashboardServer, type DashboardServer } from '../../web/server.ts';
import { T0, trial } from '../helpers/processorFixtures.ts';
import { launchChromium } from './chromium.ts';
import { firstRender, pageLog } from './firstRender.ts';
import { SCREENSHOTS } from './processes.ts';

/**
 * A real store's names are long: a new user's trial had the suite "sample refund-review eval repeated 3 times" on a
 * dataset "promptfoo-…", and at 390 px the suite selector's option text would not shrink, so every view scrolled
 * sideways (a page 521 px wide). Here, in Chromium over a store of two such scopes served in-process: at 390 px no
 * view is wider than the window, the selector fits its header, and the whole name is in its title.
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const innerWidth: number;

const SUITE = 'sample refund-review eval repeated 3 times over every order of the quarter';
const DATASET = 'promptfoo-refund-review-2026-11-30T18-04-12Z-9f3c2a7e5b1d4c6a8e0f';
const FULL = `${SUITE} · dataset ${DATASET}`;
const VIEWS = ['overview', 'compare', 'rows', 'gates', 'production', 'judges', 'datasets', 'deadletters'] as const;

const events: PasskEvent[] = [SUITE, `${SUITE} (second)`].flatMap((suite) =>
  Array.from({ length: 4 }, (_, i) =>
    ['v1', 'v2'].flatMap((version) =>
      [0, 1, 2].map((attempt) =>
        trial({
          suite,
          dataset_version: DATASET,
          row: `r${i}`,
          version,
          attempt,
          at: T0 + attempt * 1000 + i,
          passed: !(version === 'v2' && i === 0 && attempt === 1),
        }),
      ),
    ),
  ).flat(),
);

let server: DashboardServer;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let log: string[];

beforeAll(async () => {
  const { data } = createMemoryDashboardData(events);
  server = await createDashboardServer({ data, port: 0 });
  browser = await launchChromium({ width: 1440, height: 900 });
  log = pageLog(browser.page);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const q = new URLSearchParams({ suite: SUITE, dataset_version: DATASET });
const hashOf = (v: string) => `#/${v}?${q}${v === 'compare' || v === 'rows' ? '&baseline=v1&candidate=v2' : ''}`;

/** Opens `view` on a page load of its own (the scope selector is drawn by the first render). */
const open = async (view: string) => {
  await browser.page.goto(`${server.url}${hashOf(view)}`);
  await browser.page.reload();
  await firstRender(browser.page, view, log, 30_000);
};

describe('a suite and dataset with long names', () => {
  it('fits every view in 390 px: the scope selector shrinks, with the whole name in its title', async () => {
    const page = browser.page;
    mkdirSync(SCREENSHOTS, { recursive: true });
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const view of VIEWS) {
        await open(view);
        const { scroll, inner } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          inner: innerWidth,
        }));
        expect(scroll, `${view} at ${width} px`).toBeLessThanOrEqual(inner);
        const select = page.locator('[data-testid="scope"]');
        expect(await select.getAttribute('title')).toBe(FULL);
        expect(await select.locator('option').first().getAttribute('title')).toBe(FULL);
        const box = await select.boundingBox();
        expect(box!.x + box!.width, `${view}'s scope selector at ${width} px`).toBeLessThanOrEqual(width);
        const file = join(SCREENSHOTS, `long-scope-${view}-${width}.png`);
        await page.screenshot({ path: file });
        expect(statSync(file).size).toBeGreaterThan(5_000);
      }
    }
    expect(log.filter((l) => !l.startsWith('requestfailed'))).toEqual([]);
  }, 300_000);
});
