import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Page } from 'playwright-core';
import { launchChromium } from '../test/browser/chromium.ts';
import { passkServer } from '../test/browser/processes.ts';
import { memoryOf } from './dashboardKit.ts';
import { benchAttempts, generateStore } from './generatedStore.ts';

/**
 * First paint of every dashboard view (issue #32) in Chromium over `passk serve --no-process` on a generated store
 * (bench/generatedStore.ts: `rows` rows × 2 versions × 5 attempts), against the same view over an empty store in the
 * same run. A view's first paint is the time from the page's navigation to the dashboard's first render of that
 * view (`body[data-view]` set, as the browser tests wait for it). Per round, every view is opened:
 * - cold: the first page on a `passk serve` just started (nothing kept: the server keeps answers until the store
 *   moves, and views share answers, so each cold view gets a server of its own);
 * - warm: the same page again on that server (its answers kept);
 * - empty: the same page on a server over an empty store (the baseline: page load, shell and one render).
 * The DOM size (elements) after the cold render, and the server's RSS after its warm render, are printed too.
 */
export const VIEWS = [
  { view: 'overview', hash: '#/overview?suite=bench&dataset_version=d1' },
  { view: 'compare', hash: '#/compare?suite=bench&dataset_version=d1&baseline=v1&candidate=v2' },
  { view: 'rows', hash: '#/rows?suite=bench&dataset_version=d1&baseline=v1&candidate=v2' },
  { view: 'gates', hash: '#/gates' },
  { view: 'production', hash: '#/production' },
  { view: 'judges', hash: '#/judges' },
  { view: 'datasets', hash: '#/datasets' },
  { view: 'deadletters', hash: '#/deadletters' },
] as const;

export type FirstPaintLine = {
  view: string;
  coldMs: number[];
  warmMs: number[];
  emptyMs: number[];
  elements: number;
  rssMb: number;
};
export type FirstPaintBench = { trials: number; rows: number; generateMs: number; lines: FirstPaintLine[] };

declare const document: {
  body: { dataset: Record<string, string | undefined> };
  getElementsByTagName(name: string): { length: number };
  querySelector(s: string): unknown;
};

/** Opens `hash` as a new page load and resolves with the ms until the view's first render; throws on its error banner. */
export const paint = async (page: Page, url: string, view: string, hash: string): Promise<number> => {
  await page.goto('about:blank');
  const t = performance.now();
  await page.goto(`${url}${hash}`);
  await page.waitForFunction((v) => document.body.dataset.view === v, view, { timeout: 300_000 });
  const ms = performance.now() - t;
  if (await page.evaluate(() => document.querySelector('[data-testid="error-banner"]') !== null))
    throw new Error(
      `the ${view} view drew its error banner: ${await page.textContent('[data-testid="error-banner"]')}`,
    );
  return ms;
};

const rssMb = (pid: number | undefined): number => (pid === undefined ? NaN : memoryOf(pid).rss);

const serve = (dataDir: string) =>
  passkServer(['--data-dir', dataDir, 'serve', '--no-process', '--port', '0', '--json'], (line) =>
    line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
  );

/**
 * `keep`: a directory where the generated stores are kept between runs (`PASSK_BENCH_STORE`): a store of this shape
 * found there (`firstpaint-<rows>x<attempts>`, PASSK_BENCH_ATTEMPTS's; `firstpaint-empty`) is served as it is, else
 * generated there and left for the next run. `passk serve --no-process` never writes them: a kept one is as generated.
 */
export async function benchFirstPaint(o: {
  rows: number;
  rounds?: number;
  log?: (line: string) => void;
  keep?: string;
}): Promise<FirstPaintBench> {
  const rounds = o.rounds ?? 3;
  const log = o.log ?? (() => {});
  const dir = o.keep ?? mkdtempSync(join(tmpdir(), 'passk-bench-firstpaint-'));
  const browser = await launchChromium();
  try {
    const full = join(dir, o.keep ? `firstpaint-${o.rows}x${benchAttempts()}` : 'full');
    const empty = join(dir, o.keep ? 'firstpaint-empty' : 'empty');
    const kept = (d: string) => o.keep !== undefined && existsSync(join(d, 'store'));
    // rows × 2 versions × the attempts the store is generated with (PASSK_BENCH_ATTEMPTS)
    let generated = { trials: o.rows * 2 * benchAttempts(), ms: 0 };
    if (kept(full)) log(`  serving the kept store ${full}`);
    else {
      log(`  generating ${generated.trials.toLocaleString('en-US')} trials …`);
      generated = await generateStore({ dataDir: full, rows: o.rows, log });
      log(`  generated in ${(generated.ms / 1000).toFixed(1)} s`);
    }
    if (!kept(empty)) await generateStore({ dataDir: empty, rows: 0 });
    const lines: FirstPaintLine[] = VIEWS.map(({ view }) => ({
      view,
      coldMs: [],
      warmMs: [],
      emptyMs: [],
      elements: 0,
      rssMb: 0,
    }));
    for (let round = 0; round < rounds; round++)
      for (const [i, { view, hash }] of VIEWS.entries()) {
        const line = lines[i]!;
        const server = await serve(full);
        try {
          line.coldMs.push(await paint(browser.page, server.value, view, hash));
          line.elements = await browser.page.evaluate(() => document.getElementsByTagName('*').length);
          line.warmMs.push(await paint(browser.page, server.value, view, hash));
          line.rssMb = Math.max(line.rssMb, rssMb(server.child.pid));
        } finally {
          await server.stop();
        }
        const bare = await serve(empty);
        try {
          line.emptyMs.push(await paint(browser.page, bare.value, view, hash));
        } finally {
          await bare.stop();
        }
        log(
          `  ${view}: cold ${line.coldMs.at(-1)!.toFixed(0)} ms, warm ${line.warmMs.at(-1)!.toFixed(0)} ms, ` +
            `empty store ${line.emptyMs.at(-1)!.toFixed(0)} ms, ${line.elements} elements`,
        );
      }
    return { trials: generated.trials, rows: o.rows, generateMs: generated.ms, lines };
  } finally {
    await browser.close();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}
