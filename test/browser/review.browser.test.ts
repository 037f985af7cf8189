import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoResult } from '../../demo/story.ts';
import { launchChromium, loadsAgainOnNetworkChange } from './chromium.ts';
import { passk, passkServer, SCREENSHOTS } from './processes.ts';
import { sharedDemo } from './sharedDemo.ts';

/**
 * Production review in the browser, on the demo's data: `passk demo --no-serve --json` into a fresh data directory
 * (a copy of the run the browser files share, test/browser/sharedDemo.ts), then `passk serve --ingest-token …` (with
 * its processors) over it. The sampled-trace list is the CLI's review list;
 * confirming a failure on the trace card publishes the FailureConfirmed `passk review --confirm` publishes, and the
 * processors turn it into a must-not-break row of a new dataset version.
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelector(s: string): { getAttribute(a: string): string | null } | null;
};
declare const location: { hash: string };
declare const window: { scrollTo(x: number, y: number): void };
declare const getComputedStyle: (el: unknown) => { whiteSpace: string };

const WRITE_TOKEN = 'review-test-write-token';
const IMG = SCREENSHOTS;

let dir: string;
let demoDir: string;
let demo: DemoResult;
let server: Awaited<ReturnType<typeof passkServer>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let printed: { url: string; gate_url: string | null; row_url: string | null };
const pageErrors: string[] = [];

const show = async (hash: string, view: string): Promise<void> => {
  const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
  await page.evaluate((h) => (location.hash = h), hash);
  await page.waitForFunction(
    ([v, b]) => document.body.dataset.view === v && Number(document.body.dataset.renders ?? 0) > Number(b),
    [view, before] as const,
  );
};
const listed = (selector = '[data-testid="traces"] tbody tr') =>
  page.locator(selector).evaluateAll((trs) =>
    trs.map((tr) => ({
      trace: tr.getAttribute('data-trace') ?? '',
      failed: tr.getAttribute('data-failed'),
      confirmed: tr.getAttribute('data-confirmed'),
    })),
  );

/** `passk review --json`: the CLI's list of sampled failures to review (confirmed ones left out). */
const cliReviewList = async (): Promise<string[]> => {
  const r = await passk(['--data-dir', demoDir, 'review', '--json', '--limit', '1000']);
  if (r.code !== 0) throw new Error(`passk review exited ${r.code}\n${r.stderr}`);
  return (JSON.parse(r.stdout) as { failures: { trace_id: string }[] }).failures.map((f) => f.trace_id);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-review-'));
  const run = await sharedDemo(dir);
  if (run.code !== 0) throw new Error(`passk demo exited ${run.code}\n${run.stderr}`);
  demo = JSON.parse(run.stdout) as DemoResult;
  demoDir = join(dir, 'demo');
  server = await passkServer(
    ['--data-dir', demoDir, 'serve', '--port', '0', '--json', '--ingest-token', WRITE_TOKEN],
    (line) => {
      try {
        return (JSON.parse(line) as { url?: string }).url ? line : undefined;
      } catch {
        return undefined;
      }
    },
  );
  printed = JSON.parse(server.value) as typeof printed;
  browser = await launchChromium({ width: 1440, height: 900 });
  page = browser.page;
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${printed.url}#/production`);
  await page.waitForFunction(() => document.body.dataset.view === 'production');
}, 400_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const kv = (key: string, v: string | number) => ({
  key,
  value: typeof v === 'string' ? { stringValue: v } : { intValue: String(v) },
});

/** One failed chat span (an upstream timeout) of `latency` ns ending now, as OTLP JSON to passk serve's /v1/traces. */
const postFailedChat = (url: string, hex: string, latency: bigint, attributes: ReturnType<typeof kv>[]) => {
  const end = BigInt(Date.now()) * 1_000_000n;
  const span = {
    traceId: hex.padEnd(32, '0'),
    spanId: hex.padEnd(16, '0'),
    name: 'chat gpt-4o',
    startTimeUnixNano: String(end - latency),
    endTimeUnixNano: String(end),
    status: { code: 2, message: 'upstream timeout' },
    attributes,
  };
  return fetch(new URL('/v1/traces', url), {
    method: 'POST',
    headers: { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }),
  });
};

describe('landing on the decision', () => {
  it('serve prints the deep link of the latest gate, and the page opened without a route lands on it', async () => {
    const latest = demo.next_gate!; // the demo's last gate: the one on the dataset version with the confirmed row
    const q = new URLSearchParams({
      suite: demo.suite,
      dataset_version: latest.dataset_version,
      baseline: latest.baseline,
      candidate: latest.candidate,
    });
    expect(printed.gate_url).toBe(`${printed.url}#/compare?${q}`);
    const landing = await browser.context.newPage();
    loadsAgainOnNetworkChange(landing);
    try {
      await landing.goto(printed.url);
      await landing.waitForFunction(() => document.body.dataset.view === 'compare');
      expect(await landing.evaluate(() => location.hash)).toBe(`#/compare?${q}`);
      expect(await landing.getAttribute('[data-testid="compare-verdict"]', 'data-verdict')).toBe(latest.verdict);
      // a deep link to a row opens its attempt diff on the comparison
      const first = demo.gate;
      const regressed = first.reasons.find((r) => !r.passed)!.rows[0]!;
      const rowUrl = `${printed.url}#/compare?${new URLSearchParams({ suite: demo.suite, dataset_version: first.dataset_version, baseline: first.baseline, candidate: first.candidate, row: regressed })}`;
      await landing.goto(rowUrl);
      await landing.waitForSelector('[data-testid="drill-down"]');
      expect(await landing.getAttribute('[data-testid="compare-verdict"]', 'data-verdict')).toBe('fail');
    } finally {
      await landing.close();
    }
  });
});

describe('counts that open the row explorer', () => {
  it('a class chip of the overview opens the explorer filtered to exactly that many rows', async () => {
    const q = new URLSearchParams({ suite: demo.suite, dataset_version: demo.dataset.version });
    await page.goto(`${printed.url}#/overview?${q}`);
    await page.waitForFunction(() => document.body.dataset.view === 'overview');
    for (const version of [demo.baseline, demo.candidate]) {
      const chip = page.locator(`[data-testid="version-card"][data-version="${version}"] a.chip[data-class="flip"]`);
      const count = await chip.getAttribute('data-value');
      await chip.click();
      await page.waitForFunction(() => document.body.dataset.view === 'rows');
      expect(await page.getAttribute('[data-testid="row-count"]', 'data-count')).toBe(count);
      expect(await page.evaluate(() => location.hash)).toMatch(version === demo.baseline ? /from=flip/ : /to=flip/);
      await page.goBack();
      await page.waitForFunction(() => document.body.dataset.view === 'overview');
    }
  });
});

describe('production review in the browser', () => {
  let picked: string;

  it('lists the sampled failures the CLI lists, plus the one the demo confirmed, with its dataset row', async () => {
    await show('#/production', 'production');
    const shown = await listed();
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.every((t) => t.failed === 'true')).toBe(true);
    const open = shown.filter((t) => t.confirmed === 'false').map((t) => t.trace);
    expect(new Set(open)).toEqual(new Set(await cliReviewList()));
    const confirmed = shown.filter((t) => t.confirmed === 'true').map((t) => t.trace);
    expect(confirmed).toEqual([demo.production.confirmed_failure.trace_id]);
    expect(
      await page
        .locator(`[data-testid="traces"] tr[data-trace="${confirmed[0]}"]`)
        .textContent()
        .then((t) => t ?? ''),
    ).toContain(demo.production.confirmed_failure.row_id!);
    picked = open[0]!;
  });

  it('filters by segment and shows every sampled trace on request', async () => {
    const segment = await page.locator('select[data-filter="segment"] option').nth(1).getAttribute('value');
    await page.selectOption('select[data-filter="segment"]', segment!);
    await page.waitForFunction(() => location.hash.includes('segment='));
    await page.waitForFunction(() => document.body.dataset.route === location.hash);
    const shown = await listed();
    const texts = await page.locator('[data-testid="traces"] tbody tr td:nth-child(2)').allTextContents();
    expect(shown.length).toBeGreaterThan(0);
    expect(texts.every((t) => t.endsWith(`· ${segment}`))).toBe(true);
    await show('#/production?failed=all', 'production');
    const all = await listed();
    expect(all.some((t) => t.failed === 'false')).toBe(true);
    expect(all.length).toBeGreaterThan(shown.length);
  });

  it('opens a styled trace card, refuses a wrong write token, and confirms with the right one', async () => {
    await show('#/production', 'production');
    await page.click(`[data-testid="traces"] tr[data-trace="${picked}"]`);
    await page.waitForFunction((id) => location.hash.includes(`trace=${id}`), picked);
    const trace = page.locator('[data-testid="trace"]');
    await trace.waitFor();
    expect(await trace.getAttribute('data-trace')).toBe(picked);
    expect(await trace.locator('[data-field="verdicts"] .chip.fail').count()).toBeGreaterThan(0);
    expect(await trace.locator('pre[data-field="input"]').evaluate((el) => getComputedStyle(el).whiteSpace)).toBe(
      'pre-wrap',
    );

    const form = page.locator('[data-testid="confirm-form"]');
    await form.locator('input[name="expected"]').fill('deny');
    await form.locator('input[name="reviewer"]').fill('ana');
    await form.locator('input[name="note"]').fill('confirmed in the browser');
    await form.locator('input[name="token"]').fill('not-the-write-token');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(IMG, 'review-confirm-1440-light.png') });
    await form.locator('button[type="submit"]').click();
    const status = form.locator('[data-testid="confirm-status"]');
    await page.waitForFunction(() => {
      const el = document.querySelector('[data-testid="confirm-status"]');
      return el?.getAttribute('data-state') === 'error';
    });
    expect(await status.textContent()).toContain('a valid write token is required');
    expect(await cliReviewList()).toContain(picked); // nothing was published

    await form.locator('input[name="token"]').fill(WRITE_TOKEN);
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/review/confirm'));
    await form.locator('button[type="submit"]').click();
    const published = (await (await answer).json()) as { event_id: string; published: boolean };
    expect(published.published).toBe(true);
    const eventId = published.event_id;

    // The processors store it; the live page redraws the card with the confirmation and the dataset row.
    await page.waitForSelector('[data-testid="confirmation"] [data-testid="dataset-row-link"]', { timeout: 60_000 });
    expect(await page.getAttribute('[data-testid="confirmation"]', 'data-event')).toBe(eventId);
    expect(await page.getAttribute('[data-testid="confirmation"]', 'data-reviewer')).toBe('ana');
    const rowId = await page.getAttribute('[data-testid="dataset-row-link"]', 'data-row');
    const version = await page.getAttribute('[data-testid="dataset-row-link"]', 'data-version');
    expect(version).not.toBe(demo.production.confirmed_failure.dataset_version);

    // The row is a must-not-break row of the new dataset version, linked to the trace.
    await page.click('[data-testid="dataset-row-link"]');
    await page.waitForFunction(() => document.body.dataset.view === 'datasets');
    const row = page.locator(`[data-testid="mnb-rows"][data-version="${version}"] tr[data-row="${rowId}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(2).textContent()).toContain('must_not_break');
    expect(await row.locator('a[data-trace]').getAttribute('data-trace')).toBe(picked);
    expect(await row.getAttribute('class')).toContain('selected');

    // The CLI path publishes the very same event: confirming again from the terminal is the same id, counted once.
    const cli = await passk([
      '--data-dir',
      demoDir,
      'review',
      '--confirm',
      picked,
      '--expected',
      'deny',
      '--dataset',
      demo.dataset.id,
      '--reviewer',
      'ana',
      '--json',
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    expect((JSON.parse(cli.stdout) as { event_id: string }).event_id).toBe(eventId);
    expect(await cliReviewList()).not.toContain(picked);
    expect(pageErrors).toEqual([]);
  });

  it("refuses another agent's trace naming the versions, and confirms it with the box, naming its agent version", async () => {
    // A failed trace of support-v3 (no trials on the demo's suite, refund-review, where the demo's prompt-v1, v2 and v3
    // have some), sent over OTLP to passk serve: the processors under it store it.
    const id = 'a11e9e'.padEnd(32, '0');
    const res = await postFailedChat(printed.url, 'a11e9e', 900_000_000n, [
      kv('gen_ai.operation.name', 'chat'),
      kv('gen_ai.agent.version', 'support-v3'),
      kv('user.id', 'user-other-agent'),
      kv('gen_ai.input.messages', '[{"role":"user","content":"my headphones broke, refund?"}]'),
    ]);
    expect(res.status).toBe(200);
    for (let i = 0; i < 300; i++) {
      await show(`#/production?trace=${id}&r=${i}`, 'production');
      if (await page.locator(`[data-testid="trace"][data-trace="${id}"] [data-testid="confirm-form"]`).count()) break;
      await page.waitForTimeout(200);
    }
    const form = page.locator(`[data-testid="trace"][data-trace="${id}"] [data-testid="confirm-form"]`);
    await form.waitFor();
    await form.locator('select[name="dataset"]').selectOption(demo.dataset.id);
    await form.locator('input[name="expected"]').fill('deny');
    await form.locator('input[name="reviewer"]').fill('ana');
    await form.locator('input[name="token"]').fill(WRITE_TOKEN);
    await form.locator('button[type="submit"]').click();
    const refused = await page.waitForFunction(() => {
      const el = document.querySelector('[data-testid="confirm-status"]');
      return el?.getAttribute('data-state') === 'error' && (el as unknown as { textContent: string }).textContent;
    });
    const said = String(await refused.jsonValue()).replace(/\s+/g, ' ');
    expect(said).toContain(`Not confirmed: field dataset: trace ${id} was recorded by agent version support-v3`);
    expect(said).toContain('no trials on suite refund-review (its versions: prompt-v1, prompt-v2');
    expect(said).toContain('tick "confirm although it was recorded by another agent"');
    expect(await cliReviewList()).toContain(id); // nothing was published

    await form.locator('input[name="any_agent"]').check();
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/review/confirm'));
    await form.locator('button[type="submit"]').click();
    expect(await (await answer).json()).toMatchObject({ published: true, agent_version: 'support-v3' });
    // the form says so until the processors store the confirmation and the card shows it instead (often within a
    // frame of the answer): either way the card names the agent version and keeps the check's warning
    const card = `[data-testid="trace"][data-trace="${id}"]`;
    const shown = await page.waitForFunction(
      (sel) =>
        document.querySelector(`${sel} [data-testid="agent-check"]`) &&
        (document.querySelector(sel) as unknown as { textContent: string }).textContent,
      card,
    );
    const confirmed = String(await shown.jsonValue()).replace(/\s+/g, ' ');
    expect(confirmed).toMatch(/Confirmed, recorded by agent version support-v3|Confirmed by ana on .* for dataset/);
    expect(confirmed).toContain('support-v3 · default');
    expect(confirmed).toContain('support-v3 has no trials on suite refund-review');
    expect(confirmed).toContain('confirmed all the same');
    expect(pageErrors).toEqual([]);
  });

  it('fits 390 px without horizontal scroll; screenshots of the review, light and dark', async () => {
    mkdirSync(IMG, { recursive: true });
    await show(`#/production?trace=${encodeURIComponent(picked)}`, 'production');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1440, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForTimeout(400); // the page redraws on resize
        await page.evaluate(() => window.scrollTo(0, 0));
        const { scroll, client } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          client: document.documentElement.clientWidth,
        }));
        expect(scroll, `review at ${width} px (${scheme})`).toBeLessThanOrEqual(client);
        const file = join(IMG, `review-${width}-${scheme}.png`);
        await page.screenshot({ path: file });
        expect(statSync(file).size).toBeGreaterThan(5_000);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(pageErrors).toEqual([]);
  });
  it("shows an OTLP trace's user, session, latency, models and tokens on its card, and filters by user", async () => {
    const res = await postFailedChat(printed.url, 'c0ffee', 1_234_000_000n, [
      kv('gen_ai.operation.name', 'chat'),
      kv('gen_ai.agent.version', 'prompt-v1'),
      kv('gen_ai.request.model', 'gpt-4o'),
      kv('gen_ai.response.model', 'gpt-4o-2024-08-06'),
      kv('gen_ai.usage.input_tokens', 11),
      kv('gen_ai.usage.output_tokens', 7),
      kv('user.id', 'user-card-9'),
      kv('session.id', 'sess-card-9'),
      kv('gen_ai.input.messages', '[{"role":"user","content":"where is my refund?"}]'),
    ]);
    expect(res.status).toBe(200);
    // The processors under passk serve store it; the list filtered by user then holds it alone.
    // (until the list is the filtered one: it may show before the processors have stored the trace, and on a busy
    // machine the previous route's list may still be on the page when the view is shown)
    const id = 'c0ffee'.padEnd(32, '0');
    for (let i = 0; i < 300; i++) {
      await show(`#/production?user=user-card-9&r=${i}`, 'production');
      const now = await listed();
      if (now.length === 1 && now[0]!.trace === id) break;
      await page.waitForTimeout(200);
    }
    expect((await listed()).map((t) => t.trace)).toEqual(['c0ffee'.padEnd(32, '0')]);
    await page.click(`[data-testid="traces"] tr[data-trace="${'c0ffee'.padEnd(32, '0')}"]`);
    const card = page.locator('[data-testid="trace"]');
    await card.waitFor();
    const field = (f: string) => card.locator(`[data-field="${f}"]`).textContent();
    expect(await field('user')).toBe('user-card-9');
    expect(await field('session')).toBe('sess-card-9');
    expect(await field('latency')).toBe('1,234 ms');
    expect(await field('model')).toBe('gpt-4o → gpt-4o-2024-08-06');
    expect(await field('tokens')).toBe('11 / 7');
    // The list shows the request's text, not the message list's JSON.
    expect(await page.locator('[data-testid="traces"] tbody tr td:nth-child(4)').first().textContent()).toBe(
      'where is my refund?',
    );
    expect(pageErrors).toEqual([]);
  });
});
