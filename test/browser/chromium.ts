import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page, type Request, type Response } from 'playwright-core';
import { findChromium, HOW_TO_GET_ONE } from '../../deploy/test/chromium.mjs';

/**
 * A Chromium driven by playwright-core, found by deploy/test/chromium.mjs: Playwright's own browsers, else
 * PASSK_CHROMIUM (which `npm test` sets to what it found or installed), else /usr/bin/chromium or chromium-browser.
 * None found is a failure with one line saying how to get one, never a skip. A fresh profile (user-data-dir) per
 * launch, removed on close.
 */
export const chromiumPath = (): string => {
  const found = findChromium();
  if (!found) throw new Error(HOW_TO_GET_ONE);
  return found.path;
};

export const launchChromium = async (
  viewport = { width: 1360, height: 900 },
  /** The page's time zone (the machine's when absent): views that must show UTC are tested elsewhere. */
  timezoneId?: string,
): Promise<{ context: BrowserContext; page: Page; close: () => Promise<void> }> => {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'passk-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport,
    ...(timezoneId === undefined ? {} : { timezoneId }),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // A hang guard, not a speed limit: Playwright's 30 s default for every wait ran out at CI's load (a first render of
  // the Gates view behind a fresh `passk serve`'s first answers: unprotectedGateView.browser, with the fault campaign,
  // the Kafka files and the int files side by side); the browser project's tests have 180 s each.
  context.setDefaultTimeout(90_000);
  const page = context.pages()[0] ?? (await context.newPage());
  loadsAgainOnNetworkChange(page);
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
};

/** What a dashboard page loads to be drawn at all: itself, its scripts (the module graph) and its styles. */
const PAGE_FILES = new Set(['document', 'script', 'stylesheet']);
const TRIES = 3;

/** Whether a load's own failure is the network change's: the error names it, or the document was dropped and Chromium
 * put its error page there ("interrupted by another navigation to chrome-error://chromewebdata/"). */
const changedUnder = (e: unknown): boolean =>
  String(e).includes('ERR_NETWORK_CHANGED') || String(e).includes('chrome-error://chromewebdata');

/**
 * `page.goto` and `page.reload` load the page again when the machine's network changed under the load. Chromium drops
 * every request in flight when a network interface comes, goes or changes address (net::ERR_NETWORK_CHANGED), and
 * the fault campaign's lane, run beside the browser tests, makes and removes namespaces' links all the time: a page
 * whose script was dropped never renders (CI: generatedStore.browser's production view waited its 180 s). The
 * dashboard asks its API again itself (web/client/api.js); a load whose own files were dropped is done again here, up
 * to 3 times, said on stdout. Again means a whole new document: `goto` of the same URL with a hash would be a
 * same-document navigation that loads nothing (CI: adaptiveGateView.browser's view never rendered after such a
 * "load again"), so it goes by about:blank; a reload is always a new document (longScopeName.browser reloads).
 * `launchChromium` guards its page; a test that opens another page guards it with this.
 */
export const loadsAgainOnNetworkChange = (page: Page): void => {
  const goto = page.goto.bind(page);
  const reload = page.reload.bind(page);
  const again = async (what: string, load: (tries: number) => Promise<Response | null>) => {
    for (let tries = 1; ; tries++) {
      const dropped: string[] = [];
      const onFailed = (r: Request) => {
        if (r.failure()?.errorText.includes('ERR_NETWORK_CHANGED') && PAGE_FILES.has(r.resourceType()))
          dropped.push(r.url());
      };
      page.on('requestfailed', onFailed);
      try {
        const response = await load(tries);
        if (dropped.length === 0 || tries === TRIES) return response;
      } catch (e) {
        if (!changedUnder(e) || tries === TRIES) throw e;
      } finally {
        page.off('requestfailed', onFailed);
      }
      console.log(
        `the network changed under the load of ${what} (${dropped.join(', ') || 'the page'}): loading it again`,
      );
    }
  };
  page.goto = (url, options) =>
    again(url, async (tries) => {
      if (tries > 1) await goto('about:blank');
      return goto(url, options);
    });
  page.reload = (options) => again(`${page.url()} (reload)`, () => reload(options));
};

/** A line the browser logs for a request the network change dropped (asked again: see loadsAgainOnNetworkChange). */
export const droppedByNetworkChange = (line: string): boolean => line.includes('net::ERR_NETWORK_CHANGED');
