import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { loadDemoDataset } from '../../demo/dataset/demoRow.ts';
import { parseRequest } from '../../demo/refundPolicy.ts';
import type { DemoResult } from '../../demo/story.ts';
import { classTransitions, type RowTransition } from '../../sinks/clickhouse/queries/compare.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import { launchChromium } from './chromium.ts';
import { passkServer, ROOT, SCREENSHOTS } from './processes.ts';
import { sharedDemo } from './sharedDemo.ts';

/**
 * The row explorer and the attempt diff on the demo's data, in Chromium: `passk demo --no-serve --json` into a fresh
 * data directory (a copy of the run the browser files share, test/browser/sharedDemo.ts), the store's own transition
 * query read before `passk serve` takes the store, then the page.
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const location: { hash: string };
declare const window: { scrollY: number; scrollTo(x: number, y: number): void };
declare const getComputedStyle: (el: unknown) => {
  getPropertyValue(p: string): string;
  backgroundColor: string;
  boxShadow: string;
  borderBottomWidth: string;
};

const SUITE = 'refund-review';
const dataset = loadDemoDataset();
const planted = dataset.find(
  (r) =>
    r.tags.includes('must_not_break') &&
    parseRequest(r.input).order.proof === 'cart_screenshot' &&
    r.expected_checks.return_window === true,
)!;

let dir: string;
let demo: DemoResult;
let transitions: RowTransition[];
let outputs: Map<string, string[]>;
let server: Awaited<ReturnType<typeof passkServer>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const pageErrors: string[] = [];

const rowsHash = (extra: Record<string, string> = {}) =>
  `#/rows?${new URLSearchParams({ suite: SUITE, dataset_version: demo.dataset.version, baseline: demo.baseline, candidate: demo.candidate, ...extra })}`;

const show = async (hash: string, view = 'rows'): Promise<void> => {
  const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
  await page.evaluate((h) => (location.hash = h), hash);
  await page.waitForFunction(
    ([v, b]) => document.body.dataset.view === v && Number(document.body.dataset.renders ?? 0) > Number(b),
    [view, before] as const,
  );
};
/** Does what changes the Rows view's filters, then waits until the server's page for the latest of them is shown. */
const redrawn = async (change: () => Promise<unknown>): Promise<void> => {
  const before = await page.evaluate(() => Number(document.body.dataset.rowsAsked ?? 0));
  await change();
  await page.waitForFunction(
    (b) =>
      Number(document.body.dataset.rowsAsked ?? 0) > b &&
      document.body.dataset.rowsShown === document.body.dataset.rowsAsked,
    before,
  );
};
const shownIds = () =>
  page
    .locator('[data-testid="explorer"] tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-row') ?? ''));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-explorer-'));
  const run = await sharedDemo(dir);
  if (run.code !== 0) throw new Error(`passk demo exited ${run.code}\n${run.stderr}`);
  demo = JSON.parse(run.stdout) as DemoResult;
  const demoDir = join(dir, 'demo');
  const store = await openStore(loadConfig({ dataDir: demoDir }, {}, ROOT));
  const t = await classTransitions(store.client, {
    suite: SUITE,
    dataset_version: demo.dataset.version,
    baseline: demo.baseline,
    candidate: demo.candidate,
  });
  transitions = t.rows;
  const all = await loadTrialsForReport(store.client, { suites: [SUITE], datasetVersions: [demo.dataset.version] });
  outputs = new Map();
  for (const x of all) outputs.set(x.row_id, [...(outputs.get(x.row_id) ?? []), x.output ?? '']);
  await store.close();
  server = await passkServer(['--data-dir', demoDir, 'serve', '--port', '0', '--json'], (line) => {
    try {
      return (JSON.parse(line) as { url?: string }).url;
    } catch {
      return undefined;
    }
  });
  browser = await launchChromium({ width: 1440, height: 900 });
  page = browser.page;
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(server.value + rowsHash());
  await page.waitForFunction(() => document.body.dataset.view === 'rows');
}, 400_000);

/** The store's transition query's rows, flip on the baseline and flip on the candidate. */
const flipFlip = () =>
  transitions.filter((r) => r.baseline.class === 'flip' && r.candidate.class === 'flip').map((r) => r.row_id);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the row explorer, on the demo’s data', () => {
  it('lists all 200 rows of the scope', async () => {
    expect(dataset).toHaveLength(200);
    expect(await shownIds()).toEqual(dataset.map((r) => r.row_id).sort());
    expect(await page.getAttribute('[data-testid="row-count"]', 'data-count')).toBe('200');
  });

  it('filters flip → flip to exactly the rows the store’s transition query gives, and the matrix cell opens the same', async () => {
    const flipFlipRows = flipFlip();
    expect(flipFlipRows.length).toBeGreaterThan(0);
    await redrawn(async () => {
      await page.selectOption('select[data-filter="from"]', 'flip');
      await page.selectOption('select[data-filter="to"]', 'flip');
    });
    expect(await shownIds()).toEqual(flipFlipRows);
    expect(await page.evaluate(() => location.hash)).toContain('from=flip');

    await show(
      `#/compare?${new URLSearchParams({ suite: SUITE, dataset_version: demo.dataset.version, baseline: demo.baseline, candidate: demo.candidate })}`,
      'compare',
    );
    const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
    await page.click('[data-testid="transition-matrix"] td[data-from="flip"][data-to="flip"] a');
    await page.waitForFunction(
      (b) => document.body.dataset.view === 'rows' && Number(document.body.dataset.renders ?? 0) > b,
      before,
    );
    expect(await shownIds()).toEqual(flipFlipRows);
    expect(await page.locator('[data-testid="transition-matrix"]').count()).toBe(0);
    expect(transitions).toHaveLength(200);
  });

  it('finds a row by a word of its input', async () => {
    await show(rowsHash());
    // A word that occurs in one row's request only (and in no id or output).
    const words = new Map<string, Set<string>>();
    for (const r of dataset)
      for (const w of parseRequest(r.input).message.toLowerCase().split(/\s+/)) {
        const word = w.replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
        if (word.length >= 4) words.set(word, new Set([...(words.get(word) ?? []), r.row_id]));
      }
    const [word, rows] = [...words.entries()].find(
      ([w, ids]) => ids.size === 1 && ![...outputs.values()].flat().some((o) => o.toLowerCase().includes(w)),
    )!;
    await redrawn(() => page.fill('[data-testid="search"]', word));
    await page.waitForFunction(() => document.body.dataset.view === 'rows');
    expect(await shownIds()).toEqual([...rows]);
    expect(await page.evaluate(() => decodeURIComponent(location.hash))).toContain(`q=${word}`);
  });

  it('exports as CSV exactly the filtered table', async () => {
    await show(rowsHash({ to: 'flip' }));
    const ids = await shownIds();
    expect(ids.length).toBeGreaterThan(0);
    const cells = await page
      .locator('[data-testid="explorer"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-csv"]')]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trimEnd()
      .split('\n');
    const head = csv[0]!.split(',');
    expect(head.slice(0, 3)).toEqual(['row_id', 'input', 'expected']);
    const records = csv.slice(1).map((line) => {
      // quoted cells may hold commas: a small CSV reader
      const out: string[] = [];
      let cur = '';
      let quoted = false;
      for (let i = 0; i < line.length; i++) {
        const ch = line[i]!;
        if (quoted && ch === '"' && line[i + 1] === '"') {
          cur += '"';
          i++;
        } else if (ch === '"') quoted = !quoted;
        else if (ch === ',' && !quoted) {
          out.push(cur);
          cur = '';
        } else cur += ch;
      }
      out.push(cur);
      return Object.fromEntries(head.map((h, i) => [h, out[i] ?? '']));
    });
    expect(records.map((r) => r.row_id)).toEqual(ids);
    for (const [i, r] of records.entries()) {
      const row = cells[i]!;
      expect(row[1]).toBe(r.input);
      expect(row[4]).toBe(`${r.baseline_passed}/${r.baseline_graded}`);
      expect(row[10]).toBe(`${r.candidate_passed}/${r.candidate_graded}`);
      expect(r.candidate_class).toBe('flip');
    }
  });
});

describe('the attempt diff', () => {
  it(`shows ${'R159'} side by side, with the divergent check marked only where it is wrong, and keeps the list’s scroll`, async () => {
    expect(planted.row_id).toBe('R159');
    await show(rowsHash());
    await page.evaluate(() => window.scrollTo(0, 1200));
    const y = await page.evaluate(() => window.scrollY);
    expect(y).toBeGreaterThan(0);
    await show(rowsHash({ row: planted.row_id }));
    expect(await page.evaluate(() => window.scrollY)).toBe(y);
    const panel = page.locator('[data-testid="attempt-diff"]');
    expect(await panel.getAttribute('data-row')).toBe(planted.row_id);
    expect(
      await panel
        .locator('thead th[data-version]')
        .evaluateAll((ths) => ths.map((t) => t.getAttribute('data-version'))),
    ).toEqual([demo.baseline, demo.candidate]);
    const attempts = panel.locator('tbody tr');
    // one line per attempt number: screening plus the confirmation attempts the processors asked for on it
    const regressed = demo.regressions.find((r) => r.row_id === planted.row_id)!;
    expect(regressed.baseline.n).toBe(regressed.candidate.n);
    expect(await attempts.count()).toBe(regressed.candidate.n);
    const marks = await attempts.evaluateAll((trs) =>
      trs.map((tr) =>
        [...tr.querySelectorAll('td.attempt')].map((td) =>
          [...td.querySelectorAll('.check')]
            .filter((c) => c.getAttribute('data-wrong') === 'true')
            .map((c) => c.getAttribute('data-check')),
        ),
      ),
    );
    for (const [b, c] of marks) {
      expect(b).toEqual([]);
      expect(c).toEqual(['proof_of_purchase']);
    }
    // the outputs differ word by word: the baseline's answer struck, the candidate's inserted
    expect(await attempts.first().locator('td.attempt').nth(0).locator('del').textContent()).toBe('deny');
    expect(await attempts.first().locator('td.attempt').nth(1).locator('ins').textContent()).toBe('approve');
    expect(await panel.locator('[data-testid="diff-divergence"]').getAttribute('data-check')).toBe('proof_of_purchase');
  });

  it('moves to the next and previous row with j and k, and closes with Escape', async () => {
    const ids = await shownIds();
    const i = ids.indexOf(planted.row_id);
    // wait for the row each key opens, not for any render: a live update's render satisfied that wait before the
    // keypress's own in CI (R159 seen where R160 was due)
    const shown = () =>
      page.getAttribute('[data-testid="attempt-diff"]', 'data-row', { timeout: 1_000 }).catch(() => null);
    await page.keyboard.press('j');
    await expect.poll(shown, { timeout: 30_000 }).toBe(ids[i + 1]);
    await page.keyboard.press('k');
    await expect.poll(shown, { timeout: 30_000 }).toBe(planted.row_id);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="attempt-diff"]').count(), { timeout: 30_000 }).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});

const VIEWS = ['overview', 'compare', 'rows', 'gates', 'production', 'judges', 'datasets', 'deadletters'] as const;
/** The screenshots docs/dashboard.md shows (docs/img/ when PASSK_SCREENSHOTS=docs/img): every view, light and dark, 1440 and 390 px wide. */
const IMG = SCREENSHOTS;

describe('states and layout', () => {
  it('shows a store error as a banner naming what failed, with the navigation intact and the live dot red', async () => {
    await page.route('**/api/overview?**', (route) =>
      route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'Code: 60. DB::Exception: Unknown table expression identifier trials' }),
      }),
    );
    await show(`#/overview?suite=${SUITE}&dataset_version=${demo.dataset.version}`, 'overview');
    const banner = page.locator('[data-testid="error-banner"]');
    expect(await banner.locator('h2').textContent()).toBe('Could not load the Overview view');
    expect(await banner.locator('pre').textContent()).toContain('/api/overview: 500 Code: 60. DB::Exception');
    expect(
      await page.locator('#nav a[data-view]').evaluateAll((as) => as.map((a) => a.getAttribute('data-view'))),
    ).toEqual([...VIEWS]);
    expect(await page.getAttribute('#live', 'data-state')).toBe('error');
    await page.unroute('**/api/overview?**');
    // the same scope written in another order: a new hash, so the page renders again (the same hash would not)
    await show(`#/overview?dataset_version=${demo.dataset.version}&suite=${SUITE}`, 'overview');
    expect(await page.locator('[data-testid="error-banner"]').count()).toBe(0);
    expect(await page.getAttribute('#live', 'data-state')).not.toBe('error');
  });

  it('asks again for an answer the network dropped (fetch rejected, no answer at all), and draws the view', async () => {
    // Chromium drops the requests in flight when the machine's network changes (ERR_NETWORK_CHANGED): a drop, not an
    // error of the store's; one made the whole view an error banner
    let asked = 0;
    await page.route('**/api/overview?**', (route) =>
      ++asked === 1 ? route.abort('internetdisconnected') : route.continue(),
    );
    await show(`#/overview?suite=${SUITE}&dataset_version=${demo.dataset.version}`, 'overview');
    await page.unroute('**/api/overview?**');
    expect(asked).toBe(2);
    expect(await page.locator('[data-testid="error-banner"]').count()).toBe(0);
    expect(await page.getAttribute('#live', 'data-state')).not.toBe('error');
  });

  it('asks a view’s question for the scope the URL names beside the list of suites and versions, once', async () => {
    // a cold first paint waited for /api/groups before asking the view's own question (docs/performance.md, issue #32)
    const scope = { suite: SUITE, dataset_version: demo.dataset.version };
    const pair = { baseline: demo.baseline, candidate: demo.candidate };
    for (const [view, query] of [
      ['overview', scope],
      ['compare', { ...scope, ...pair }],
      ['rows', { ...scope, ...pair }],
    ] as const) {
      const events: string[] = [];
      const path = (url: string) => new URL(url).pathname;
      const asked = (r: { url(): string }) => void events.push(`asked ${path(r.url())}`);
      const answered = (r: { url(): string }) => void events.push(`answered ${path(r.url())}`);
      page.on('request', asked);
      page.on('requestfinished', answered);
      await page.goto('about:blank');
      await page.goto(`${server.value}#/${view}?${new URLSearchParams(query)}`);
      await page.waitForFunction((v) => document.body.dataset.view === v, view);
      page.off('request', asked);
      page.off('requestfinished', answered);
      const own = `/api/${view}`;
      expect(
        events.filter((e) => e === `asked ${own}`),
        view,
      ).toHaveLength(1);
      expect(events.indexOf(`asked ${own}`), view).toBeLessThan(events.indexOf('answered /api/groups'));
      expect(await page.locator('[data-testid="error-banner"]').count(), view).toBe(0);
    }
  });

  it('warns about a bad URL parameter instead of falling back silently', async () => {
    await show(`#/rows?suite=${SUITE}&dataset_version=no-such-version`);
    expect(await page.textContent('[data-testid="param-warning"]')).toContain('no-such-version');
    await show(rowsHash({ from: 'sometimes' }));
    expect(await page.textContent('[data-testid="param-warning"]')).toContain('Unknown class "sometimes"');
  });

  it('counts the distinct rows that keep a stable verdict while a check flips, and links exactly them', async () => {
    await show(
      `#/overview?${new URLSearchParams({ suite: SUITE, dataset_version: demo.dataset.version })}`,
      'overview',
    );
    const links = page.locator('[data-testid="hidden-flips"]');
    expect(await links.count()).toBeGreaterThan(0);
    for (const a of await links.all()) {
      const ids = new URLSearchParams((await a.getAttribute('href'))!.split('?')[1]).get('ids')!.split(',');
      expect(new Set(ids).size).toBe(ids.length);
      expect(await a.textContent()).toBe(ids.length === 1 ? '1 row' : `${ids.length} rows`);
    }
    await show(rowsHash()); // leave the overview, so the next test's first hash is a change
  });

  it('shades the sides of a table box that hide columns, at every width and after a sideways scroll', async () => {
    const q = new URLSearchParams({ suite: SUITE, dataset_version: demo.dataset.version });
    // each box's mark against its geometry: the sides where some of it is scrolled out of sight
    const marks = () =>
      page.locator('#view .scroll').evaluateAll((boxes) =>
        boxes.map((b) => ({
          more: b.getAttribute('data-more') ?? '',
          left: b.scrollLeft > 1,
          right: b.scrollLeft + b.clientWidth < b.scrollWidth - 1,
          shadow: getComputedStyle(b).boxShadow,
        })),
      );
    const expected = (m: { left: boolean; right: boolean }) =>
      m.left && m.right ? 'both' : m.left ? 'left' : m.right ? 'right' : '';
    const seen: string[] = [];
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const v of VIEWS) {
        await show(`#/${v}?${q}${v === 'rows' ? `&baseline=${demo.baseline}&candidate=${demo.candidate}` : ''}`, v);
        // every box's mark matches its geometry once the view has settled (charts drawn, columns filled)
        const wrong = async () =>
          (await marks()).filter((m) => m.more !== expected(m) || (m.shadow === 'none') !== (m.more === ''));
        await expect.poll(wrong, { message: `${v} at ${width} px`, timeout: 30_000 }).toEqual([]);
        for (const m of await marks()) seen.push(`${width} ${m.more || 'none'}`);
      }
    }
    // boxes that show whole at 1440 px, and some cut at 390 px
    expect(seen).toContain('1440 none');
    expect(seen).toContain('390 right');
    // at 390 px the Rows table is wider than its card: shaded on the right, then both sides, then the left. Each
    // poll scrolls the box as rendered then and reads its mark (set by the scroll event: a later poll sees it).
    await show(rowsHash());
    const box = page
      .locator('#view .scroll')
      .filter({ has: page.locator('table.explorer-table') })
      .first();
    const scrolledTo = async (at: number) => {
      await box.evaluate((b, at) => (b.scrollLeft = at * (b.scrollWidth - b.clientWidth)), at);
      return box.getAttribute('data-more');
    };
    await expect.poll(() => scrolledTo(0), { timeout: 30_000 }).toBe('right');
    await expect.poll(() => scrolledTo(0.5), { timeout: 30_000 }).toBe('both');
    await expect.poll(() => scrolledTo(1), { timeout: 30_000 }).toBe('left');
    await page.screenshot({ path: join(IMG, 'rows-390-scrolled.png') });
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it('shades the edges of a list of rows cut off below or above, and draws no table rules in a chart legend', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    const scope = { suite: SUITE, dataset_version: demo.dataset.version };
    await show(
      `#/compare?${new URLSearchParams({ ...scope, baseline: demo.baseline, candidate: demo.candidate })}`,
      'compare',
    );
    // the rows that became stable-correct are more than the list's height shows (it showed 13 of 23, cut at a row's
    // edge, and looked whole)
    const list = page.locator('[data-testid="improved-list"]');
    expect(demo.became_stable_correct.length).toBeGreaterThan(20);
    // Each look is one evaluate, polled: a render queued meanwhile (the resize above, a live update) replaces the list,
    // and a list measured after it was replaced is detached, 0 px high (CI: 'expected 0 to be greater than 0').
    const settled = { timeout: 30_000 };
    await expect
      .poll(() => list.evaluate((l) => (l.isConnected ? l.scrollHeight - l.clientHeight : -1)), settled)
      .toBeGreaterThan(0);
    const scrolledTo = (at: number) =>
      list.evaluate((l, at) => {
        l.scrollTop = at * (l.scrollHeight - l.clientHeight);
        return l.isConnected ? [l.getAttribute('data-more-y'), getComputedStyle(l).boxShadow !== 'none'] : null;
      }, at);
    await expect.poll(() => scrolledTo(0), settled).toEqual(['bottom', true]);
    await expect.poll(() => scrolledTo(0.5), settled).toEqual(['both', true]);
    await expect.poll(() => scrolledTo(1), settled).toEqual(['top', true]);
    // the rows no longer stable-correct (4) show whole: no mark, no shadow
    await expect
      .poll(
        () =>
          page
            .locator('[data-testid="regressed-list"]')
            .evaluate((l) => (l.isConnected ? [l.getAttribute('data-more-y'), getComputedStyle(l).boxShadow] : null)),
        settled,
      )
      .toEqual([null, 'none']);
    // the pass^k chart's legend: uPlot's table, with none of the data tables' rules under its cells, and no value
    // (the cursor is off the chart) shown as the other values are, —
    await show(`#/overview?${new URLSearchParams(scope)}`, 'overview');
    const cells = page.locator('.u-legend th, .u-legend td');
    await expect.poll(() => cells.count(), settled).toBeGreaterThan(0);
    expect(new Set(await cells.evaluateAll((cs) => cs.map((c) => getComputedStyle(c).borderBottomWidth)))).toEqual(
      new Set(['0px']),
    );
    expect(new Set(await page.locator('.u-legend .u-value').allTextContents())).toEqual(new Set(['—']));
    expect(pageErrors).toEqual([]);
    await show(rowsHash()); // leave the overview, so the next test's first hash is a change
  });

  it('has no horizontal scroll at 390 px on any view, and renders the dark palette; screenshots for the docs', async () => {
    mkdirSync(IMG, { recursive: true });
    const q = new URLSearchParams({ suite: SUITE, dataset_version: demo.dataset.version });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1440, 390]) {
        await page.setViewportSize({ width, height: 900 });
        for (const v of VIEWS) {
          await show(`#/${v}?${q}${v === 'rows' ? `&baseline=${demo.baseline}&candidate=${demo.candidate}` : ''}`, v);
          await page.waitForTimeout(300); // charts redraw on resize
          const { scroll, client } = await page.evaluate(() => ({
            scroll: document.documentElement.scrollWidth,
            client: document.documentElement.clientWidth,
          }));
          expect(scroll, `${v} at ${width} px (${scheme})`).toBeLessThanOrEqual(client);
          const file = join(IMG, `${v}-${width}-${scheme}.png`);
          await page.screenshot({ path: file });
          expect(statSync(file).size).toBeGreaterThan(5_000);
        }
      }
      const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      const card = await page.evaluate(() =>
        getComputedStyle(document.documentElement).getPropertyValue('--card').trim(),
      );
      if (scheme === 'dark') {
        expect(bg).toBe('rgb(11, 16, 32)');
        expect(card).toBe('#141a2a');
      } else {
        expect(bg).toBe('rgb(245, 246, 248)');
        expect(card).toBe('#fff');
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await show(rowsHash({ row: planted.row_id }));
    await page.screenshot({ path: join(IMG, 'attempt-diff-1440-light.png') });
    expect(pageErrors).toEqual([]);
  });
});
