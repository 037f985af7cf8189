import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
 * The sequential gate live in the runner, on the embedded backend with CLI commands only: publish, the baseline's
 * adaptive run, the comparison declared before the candidate runs, then the candidate's adaptive run with
 * `passk process` and the confirmation followers going. The candidate fails must-not-break row q2 in its first
 * rounds; the processors ask to confirm it, decide FAIL while the run is open, and the run stops at its next
 * round with a line saying why, before the 24 attempts it takes to the end (and its budget of 36). The candidate
 * agent holds its attempts after the third until the test has seen the verdict (agent-v2-held.ts), so the run is
 * open when the gate decides however slow the machine is.
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
const output = (child: ChildProcess) => {
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  return out;
};
const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('close', resolve)));
const stop = (child: ChildProcess): Promise<number | null> => {
  const done = exited(child);
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
  }
  return done;
};

describe('passk run --adaptive with a declared comparison: the live gate stops the run', () => {
  it('stops the candidate once the processors fail the gate, saying why, before its budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-adaptive-gate-'));
    dirs.push(dir);
    const release = join(dir, 'release');
    const env: NodeJS.ProcessEnv = { PASSK_BACKEND: 'embedded', PASSK_DATA_DIR: dir, NO_COLOR: '1' };
    const { cli, ok } = cliFor({ env, timeoutMs: 300_000 });
    const adaptive = ['--adaptive', '--max-k', '6'];

    await ok('dataset', 'publish', DATASET, '--dataset', 'refunds');
    const v1 = await ok('run', '--dataset', DATASET, '--agent', `${F}/agent-v1.ts`, ...adaptive);
    const scope = /suite (\S+) · dataset (\S+) ·/.exec(v1.stderr);
    expect(scope, v1.stderr).not.toBeNull();
    const [, suite, datasetVersion] = scope!;
    const comparison = ['--baseline', 'own-v1', '--candidate', 'own-v2', '--suite', suite!];
    await ok('gate', '--declare', ...comparison, '--dataset-version', datasetVersion!);

    const processors = background(['process'], env);
    const followers = (['v1', 'v2'] as const).map((v) =>
      background(
        ['run', '--dataset', DATASET, '--agent', `${F}/agent-${v}.ts`, '--confirmations', '--follow', '--poll', '1s'],
        env,
      ),
    );
    const candidate = background(
      [
        'run',
        '--dataset',
        DATASET,
        '--agent',
        `${F}/agent-v2-held.ts`,
        ...adaptive,
        '--budget',
        '36',
        '--timeout',
        '10m',
      ],
      { ...env, PASSK_TEST_RELEASE: release },
    );
    const ran = output(candidate);
    try {
      // the verdict comes while the candidate's run is held open on its fourth attempts
      const gate = await cli(
        'gate',
        '--declare',
        ...comparison,
        '--dataset-version',
        datasetVersion!,
        '--wait',
        '240s',
      );
      expect(gate.code, gate.stderr).toBe(1);
      expect(gate.stdout).toMatch(/GATE FAIL: candidate own-v2 against baseline own-v1/);
      expect(gate.stdout).toMatch(/FAIL .*must-not-break rows stay stable-correct.*q2/);
      writeFileSync(release, '');
      expect(await exited(candidate), ran.stderr).toBe(0);
    } finally {
      writeFileSync(release, '');
      for (const f of followers) expect(await stop(f)).toBe(0);
      expect(await stop(processors)).toBe(0);
    }
    // rounds 0 and 1 gave every row 3 attempts (18); round 2 gave q1 and q5 their fourth; then the gate had decided
    expect(ran.stdout).toContain('decided after 20 attempts (fixed k would have used 36: 6 rows × 6)');
    expect(ran.stdout.replace(/\s+/g, ' ')).toContain(
      'stopped early: the live gate decided FAIL against own-v1 (must-not-break q2 broken)',
    );

    const log = await openEventLog(loadConfig({}, { PASSK_DATA_DIR: dir }, dir));
    const rounds: AdaptiveRoundDecided[] = [];
    try {
      await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
        if (e.type === 'AdaptiveRoundDecided' && e.agent_version === 'own-v2') rounds.push(e);
      });
    } finally {
      await log.close();
    }
    const last = rounds.at(-1)!;
    expect(last).toMatchObject({ round: 3, done: true, grants: [] });
    expect(last.decisions.map((d) => [d.row_id, d.reason]).sort()).toEqual([
      ['q1', 'gate_decided'],
      ['q5', 'gate_decided'],
    ]);
  }, 600_000);
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
