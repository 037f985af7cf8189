import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';

/**
 * Issue 26, item 6: why the gates' horizon is off by default (docs/reliability.md), on the real CLI. Another
 * tool's results are imported with their own dates: v1's 200 days older than v2's, no dataset published. Under a
 * 90-day horizon v1's run is past it, so the gate waits, and `gate --status` says so (before, it said both
 * versions were complete and blamed `passk process`); as shipped, the same log decides, as `gate --from-store`.
 */
const NOW = Date.UTC(2026, 11, 1);
const DAY = 86_400_000;
const trials = (): string => {
  const lines: string[] = [];
  for (const v of ['v1', 'v2'])
    for (let row = 0; row < 4; row++)
      for (let a = 0; a < 3; a++)
        lines.push(
          JSON.stringify({
            suite: 'old',
            dataset_version: 'o1',
            row_id: `r${row}`,
            agent_version: v,
            run_id: `run-${v}`,
            attempt: a,
            passed: row < 3 || a > 0,
            output: 'x',
            expected: 'x',
            occurred_at: (v === 'v1' ? NOW - 200 * DAY : NOW) + row * 1_000 + a,
          }),
        );
  return `${lines.join('\n')}\n`;
};

const dir = mkdtempSync(join(tmpdir(), 'passk-gate-horizon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (env: Record<string, string>, ...args: string[]) =>
  passk(['--data-dir', join(dir, 'data'), ...args], { env: { NO_COLOR: '1', ...env }, timeoutMs: 200_000 });
const H90 = { PASSK_GATE_HORIZON_DAYS: '90' };

describe('a gate on imported results older than the gates’ horizon', () => {
  it('waits under a 90-day horizon and --status names the runs it no longer counts; as shipped it decides', async () => {
    writeFileSync(join(dir, 'trials.jsonl'), trials());
    const imported = await cli({}, 'import', join(dir, 'trials.jsonl'));
    expect(imported.code, imported.stderr).toBe(0);
    const declared = await cli({}, 'gate', '--declare', '--baseline', 'v1', '--candidate', 'v2');
    expect(declared.code, declared.stderr).toBe(0);

    const bounded = await cli(H90, 'process', '--until-caught-up');
    expect(bounded.code, bounded.stderr).toBe(0);
    const status = JSON.parse((await cli(H90, 'gate', '--status', '--json')).stdout) as {
      comparisons: Record<string, unknown>[];
    };
    expect(status.comparisons).toEqual([
      expect.objectContaining({
        status: 'open',
        row_set: 'unknown',
        complete: { v1: false, v2: true },
        runs: { v1: [], v2: [{ run_id: 'run-v2', trials: 12, recorded: 12 }] },
        past_horizon: { days: 90, runs: { v1: ['run-v1'] } },
      }),
    ]);
    const text = (await cli(H90, 'gate', '--status')).stdout;
    expect(text).toContain('v1: waiting: its runs on old o1 (run-v1) closed more than 90 days before the newest run');
    expect(text).not.toContain('both versions are complete');

    // as shipped (no horizon) the same log decides it, as the store does
    const shipped = await cli({}, 'process', '--until-caught-up');
    expect(shipped.code, shipped.stderr).toBe(0);
    const live = await cli({}, 'gate', '--declare', '--baseline', 'v1', '--candidate', 'v2', '--wait', '60s', '--json');
    expect(live.code, live.stderr).toBe(0);
    const verdict = JSON.parse(live.stdout) as { type: string; verdict: string };
    expect(verdict.type).toBe('GateEvaluated');
    const offline = await cli({}, 'gate', '--from-store', '--baseline', 'v1', '--candidate', 'v2', '--json');
    expect(offline.code, offline.stderr).toBe(0);
    expect(verdict.verdict).toBe((JSON.parse(offline.stdout) as { verdict: string }).verdict);
  }, 600_000);
});
