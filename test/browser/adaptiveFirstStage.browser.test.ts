import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentAnswering, cliFor } from '../helpers/cli.ts';
import { launchChromium } from './chromium.ts';
import { passkServer, SCREENSHOTS } from './processes.ts';

/**
 * An adaptive version's first stage as its run recorded it (docs/adaptive.md; issue 32, item 4): `passk process`'s
 * summary, the dashboard's Overview (/api/overview) and its Compare view take it from the run's rounds on the log
 * (`--first-k 3` here), as `passk compare --from-store` does, not from the default of 2; the Compare view says so
 * instead of "screening N / M attempts per row".
 *
 * The candidate answers row r1 wrong on its third attempt only: its first stage of 3 has r1 as a flip (mean accuracy
 * 8/9, flip rate 1/3), where a first stage of 2 would have every row right (100%, flip rate 0).
 */
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  documentElement: { scrollWidth: number; clientWidth: number };
};

const dir = mkdtempSync(join(tmpdir(), 'passk-first-stage-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { ok } = cliFor({ dataDir: data, cwd: dir, env: { NO_COLOR: '1' }, timeoutMs: 200_000 });
const THIRD_WRONG = `cmd:r=$(cat); case "$r" in *'"row_id":"r1","attempt":2,'*) echo '{"output":"wrong"}';; *) echo '{"output":"ok"}';; esac`;
const SCOPE = 'suite=stage&dataset_version=';

describe('an adaptive version with --first-k 3', () => {
  it('has its first stage of 3 in passk process, the Overview and the Compare view', async () => {
    writeFileSync(
      join(dir, 'rows.jsonl'),
      ['r1', 'r2', 'r3'].map((id) => JSON.stringify({ id, input: id, expected: 'ok' })).join('\n') + '\n',
    );
    const common = ['run', '--dataset', 'rows.jsonl', '--suite', 'stage'];
    await ok(...common, '--agent', agentAnswering('ok'), '--agent-version', 'v1', '--k', '3');
    await ok(
      ...common,
      '--agent',
      THIRD_WRONG,
      '--agent-version',
      'v2',
      '--adaptive',
      '--first-k',
      '3',
      '--max-k',
      '4',
    );

    // passk process: the summary's headline numbers of v2 from its first 3 attempts
    const processed = JSON.parse((await ok('process', '--until-caught-up', '--json')).stdout) as {
      versions: {
        agent_version: string;
        dataset_version: string;
        mean_accuracy: number;
        flip_rate: number;
        first_stage?: { k: number };
      }[];
    };
    const v2 = processed.versions.find((v) => v.agent_version === 'v2')!;
    expect(v2.first_stage?.k).toBe(3);
    expect(v2.mean_accuracy).toBeCloseTo(8 / 9, 10);
    expect(v2.flip_rate).toBeCloseTo(1 / 3, 10);
    const text = (await ok('process', '--until-caught-up')).stdout;
    expect(text).toMatch(/v2\s.*88\.9%/);

    const server = await passkServer(['--data-dir', data, 'serve', '--port', '0', '--json'], (line) =>
      line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    const browser = await launchChromium({ width: 1440, height: 900 });
    try {
      const url = server.value;
      const scope = `${SCOPE}${encodeURIComponent(v2.dataset_version)}`;
      const overview = (await (await fetch(`${url}api/overview?${scope}`)).json()) as {
        agent_version: string;
        mean_accuracy: number;
        first_stage?: { k: number };
      }[];
      const shown = overview.find((g) => g.agent_version === 'v2')!;
      expect(shown.first_stage?.k).toBe(3);
      expect(shown.mean_accuracy).toBeCloseTo(8 / 9, 10);
      const cmp = (await (await fetch(`${url}api/compare?${scope}&baseline=v1&candidate=v2`)).json()) as {
        first_stage: unknown;
      };
      expect(cmp.first_stage).toEqual({ baseline: null, candidate: 3 });

      const { page } = browser;
      mkdirSync(SCREENSHOTS, { recursive: true });
      for (const [view, hash] of [
        ['overview', `#/overview?${scope}`],
        ['compare', `#/compare?${scope}&baseline=v1&candidate=v2`],
      ] as const) {
        for (const width of [1440, 390]) {
          await page.setViewportSize({ width, height: 900 });
          await page.goto(`${url}${hash}`);
          await page.waitForFunction(
            (v) => document.body.dataset.view === v && document.body.dataset.loading === 'false',
            view,
          );
          await page.screenshot({ path: join(SCREENSHOTS, `first-stage-${view}-${width}.png`), fullPage: true });
          const sizes = await page.evaluate(() => ({
            page: document.documentElement.scrollWidth,
            screen: document.documentElement.clientWidth,
          }));
          expect(sizes.page, `the ${view} view at ${width} px`).toBeLessThanOrEqual(sizes.screen);
          if (view === 'compare') {
            const line = await page.textContent('[data-testid="screening"]');
            expect(line).toContain(
              "the candidate is adaptive: headline numbers and paired Δ from each row's first 3 graded attempts",
            );
            expect(line).not.toMatch(/screening \d+ \/ \d+ attempts per row/);
          } else expect(await page.textContent('#view')).toContain('88.9%');
        }
      }
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 600_000);
});
