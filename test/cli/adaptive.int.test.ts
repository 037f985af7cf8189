import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { readLog } from '../../producers/logReader.ts';
import type { AdaptiveRoundDecided } from '../../schemas/events/adaptive.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { ROOT } from '../browser/processes.ts';
import { cliFor } from '../helpers/cli.ts';

/**
 * The README's own-agent walkthrough with `passk run --adaptive`, end to end on the embedded backend, CLI
 * commands only: dataset publish (two must-not-break rows) → adaptive runs of the baseline and the candidate
 * (each says how many attempts it took against fixed k) → process and the confirmation followers in the
 * background → gate --declare --wait fails naming q2 → the fixed candidate, also adaptive, passes. The rounds'
 * decisions are in the log, and a second run of the same command resumes with nothing to do.
 */
const F = 'test/fixtures/own-agent';
const DATASET = `${F}/refunds.jsonl`;
const children: ChildProcess[] = [];
const dirs: string[] = [];

const background = (args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess => {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'passk.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
};
const stop = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('close', (code) => resolve(code));
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
  });

describe('passk run --adaptive: the own-agent walkthrough, publish to live gate', () => {
  it('decides the gate with fewer attempts than fixed k, and records every round', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-adaptive-'));
    dirs.push(dir);
    const env: NodeJS.ProcessEnv = { PASSK_BACKEND: 'embedded', PASSK_DATA_DIR: dir, NO_COLOR: '1' };
    const { cli, ok } = cliFor({ env, timeoutMs: 300_000 });
    const run = (v: string, ...more: string[]) =>
      ok('run', '--dataset', DATASET, '--agent', `${F}/agent-${v}.ts`, '--adaptive', '--max-k', '6', ...more);

    await ok('dataset', 'publish', DATASET, '--dataset', 'refunds');
    const v1 = await run('v1');
    // 6 rows: the 3 must-not-break rows run to max-k 6, the 3 others stop once classified at 3
    expect(v1.stdout).toContain('decided after 27 attempts (fixed k would have used 36: 6 rows × 6)');
    const again = await run('v1', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ done: 0, skipped: 27, attempts: 27 });
    const v2 = await run('v2', '--json');
    const s2 = JSON.parse(v2.stdout) as { attempts: number; fixedAttempts: number; stops: Record<string, number> };
    // q2 fails on the candidate: it stops at min-attempts 3 instead of running to 6
    expect(s2).toMatchObject({ attempts: 24, fixedAttempts: 36 });
    expect(s2.stops['must_not_break_failed']).toBe(1);

    const processors = background(['process'], env);
    const followers = (['v1', 'v2', 'v3'] as const).map((v) =>
      background(
        ['run', '--dataset', DATASET, '--agent', `${F}/agent-${v}.ts`, '--confirmations', '--follow', '--poll', '1s'],
        env,
      ),
    );
    try {
      const failed = await cli('gate', '--declare', '--baseline', 'own-v1', '--candidate', 'own-v2', '--wait', '240s');
      expect(failed.code, failed.stderr).toBe(1);
      expect(failed.stdout).toMatch(/GATE FAIL: candidate own-v2 against baseline own-v1/);
      expect(failed.stdout).toMatch(/FAIL .*must-not-break rows stay stable-correct.*q2/);
      // the decision's cost: the candidate's 24 adaptive attempts plus its confirmation attempts on q2, said apart
      // (the run printed "decided after 24 attempts": a bare 27 read as a miscount)
      expect(failed.stderr).toContain(
        'decided after 27 attempts of own-v2 (24 planned + 3 confirmation; fixed k would have used 36: 6 rows × 6)',
      );
      await run('v3');
      const passed = await cli('gate', '--declare', '--baseline', 'own-v1', '--candidate', 'own-v3', '--wait', '240s');
      expect(passed.code, passed.stderr).toBe(0);
      expect(passed.stdout).toMatch(/GATE PASS: candidate own-v3 against baseline own-v1/);
    } finally {
      for (const f of followers) expect(await stop(f)).toBe(0);
      expect(await stop(processors)).toBe(0);
    }

    // every round of every run is on passk.decisions, and its grants add up to the attempts recorded
    const log = await openEventLog(loadConfig({}, { PASSK_DATA_DIR: dir }, dir));
    const rounds: AdaptiveRoundDecided[] = [];
    try {
      await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
        if (e.type === 'AdaptiveRoundDecided' && e.agent_version === 'own-v2') rounds.push(e);
      });
    } finally {
      await log.close();
    }
    expect(rounds.map((r) => r.round)).toEqual([...rounds.keys()]);
    expect(rounds.at(-1)!.done).toBe(true);
    expect(rounds.reduce((a, r) => a + r.grants.reduce((b, g) => b + g.attempts, 0), 0)).toBe(24);
    expect(rounds.flatMap((r) => r.decisions).filter((d) => d.decision === 'stop')).toHaveLength(6);
  }, 600_000);
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
