import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
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
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
};
