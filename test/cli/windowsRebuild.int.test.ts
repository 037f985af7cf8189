import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../sinks/clickhouse/index.ts';
import { alerts, productionWindows } from '../../sinks/clickhouse/queries/production.ts';
import { cliFor } from '../helpers/cli.ts';

/**
 * Issue 26: `production_windows` is a projection of the log too. The gate processor sums the window processor's
 * snapshots (passk.rowstate) into it; a rebuild sums them again. Real CLI, embedded log, chDB: sampled production
 * traces of two days, two versions and two graders, processed; the store deleted; `passk process` rebuilds it and
 * the production views (windows and alerts) are what they were, row for row. Before, the rebuilt store had none.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-windows-rebuild-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { ok } = cliFor(() => ({ dataDir: data, env: { NO_COLOR: '1' }, timeoutMs: 200_000 }));

/** The production views as the dashboard reads them (every window length, every version, all time). */
const views = async () => {
  const store = await openClickHouse({ kind: 'embedded', path: join(data, 'store'), database: 'passk' });
  try {
    const all = { from: 0, to: Date.UTC(2100, 0, 1) };
    return { windows: await productionWindows(store.client, all), alerts: await alerts(store.client, all) };
  } finally {
    await store.close();
  }
};

describe('production windows rebuild from the log', () => {
  it('a deleted store: process rebuilds the same windows', async () => {
    // two days of traffic three days apart, each processed when it came: by the second, the first day's windows are
    // past the window processor's horizon (24 h), so its latest snapshots no longer hold them
    const day = async (name: string, start: number, seed: string) => {
      const lines: string[] = [];
      for (let i = 0; i < 160; i++) {
        const version = i % 3 === 0 ? 'v2' : 'v1';
        lines.push(
          JSON.stringify({
            trace_id: `${name}-${i}`,
            agent_version: version,
            segment: i % 2 === 0 ? 'free' : 'pro',
            input: `question ${name} ${i}`,
            output: 'answer',
            occurred_at: start + i * 90_000, // four hours
            verdicts: [
              { grader: 'judge', passed: (i * 7) % 10 < (version === 'v2' ? 4 : 8) },
              ...(i % 4 === 0 ? [] : [{ grader: 'rules', passed: i % 5 !== 0 }]),
            ],
          }),
        );
      }
      const file = join(dir, `${name}.jsonl`);
      writeFileSync(file, lines.join('\n') + '\n');
      await ok('sample', file, '--rate', '0.6', '--segment-rate', 'pro=0.3', '--seed', seed);
      await ok('process', '--until-caught-up');
    };
    await day('monday', Date.UTC(2026, 0, 5, 8), '5');
    await day('thursday', Date.UTC(2026, 0, 8, 8), '6');
    const before = await views();
    // hourly and daily windows of both days, both versions and both graders
    expect(before.windows.length).toBeGreaterThan(40);
    expect(before.windows.some((w) => w.window_start < Date.UTC(2026, 0, 6))).toBe(true);
    expect(new Set(before.windows.map((w) => `${w.agent_version} ${w.grader}`))).toEqual(
      new Set(['v1 judge', 'v1 rules', 'v2 judge', 'v2 rules']),
    );

    rmSync(join(data, 'store'), { recursive: true });
    const rebuilt = await ok('process', '--until-caught-up');
    expect(rebuilt.stderr).toContain('rebuilding it from the log first');
    expect(await views()).toEqual(before);
    await ok('check');
  });
});
