import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ROOT } from '../browser/processes.ts';
import { cliFor } from '../helpers/cli.ts';

/**
 * A team's own agent, from a fresh data directory to a gate verdict, with CLI commands only, on the embedded
 * backend and on Kafka. The agent is the user's (test/fixtures/own-agent), in all three forms: a `.ts` module,
 * an `http://` endpoint (a Python stdlib server) and `cmd:python3 agent.py` (stdlib only). In each flow the
 * baseline, the candidate and the fixed candidate use a different form, and the forms rotate between backends:
 *   dataset publish (must-not-break rows) → run baseline and candidate (k = 3) → process (background) →
 *   run --confirmations --follow for both versions (background) → gate --declare --wait: the processors ask for
 *   confirmation runs, the followers run them, the verdict is FAIL naming q2, exit 1 → the fixed candidate passes,
 *   exit 0 → gate --from-store gives the same verdicts.
 */
const F = 'test/fixtures/own-agent';
const DATASET = `${F}/refunds.jsonl`;
type Form = 'module' | 'http' | 'cmd';
const children: ChildProcess[] = [];
const dirs: string[] = [];

const background = (args: readonly string[], env: NodeJS.ProcessEnv, cmd = process.execPath): ChildProcess => {
  const child = spawn(cmd, [...(cmd === process.execPath ? [join(ROOT, 'bin', 'passk.mjs')] : []), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  (child as ChildProcess & { output: () => string }).output = () => out;
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

/** The Python stdlib HTTP agent on a free port: resolves with its base URL. */
const httpAgent = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = background([`${F}/agent.py`, 'serve', '0'], {}, 'python3');
    child.stdout!.on('data', (c: Buffer) => {
      const port = /listening on (\d+)/.exec(c.toString())?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
    child.once('close', (code) => reject(new Error(`agent.py serve exited ${code}`)));
  });

const agentArgs = (form: Form, version: 'v1' | 'v2' | 'v3', httpBase: string): string[] =>
  form === 'module'
    ? ['--agent', `${F}/agent-${version}.ts`]
    : form === 'http'
      ? ['--agent', `${httpBase}/${version}`, '--agent-version', `own-${version}`]
      : ['--agent', `cmd:python3 ${F}/agent.py ${version}`, '--agent-version', `own-${version}`];

const flow = (backend: 'embedded' | 'kafka', forms: Record<'v1' | 'v2' | 'v3', Form>) =>
  it(`${backend}: baseline ${forms.v1}, candidate ${forms.v2}, fixed candidate ${forms.v3}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), `passk-own-${backend}-`));
    dirs.push(dir);
    const env: NodeJS.ProcessEnv =
      backend === 'kafka'
        ? {
            PASSK_BACKEND: 'kafka',
            KAFKA_BROKERS: inject('kafkaBrokers'),
            SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
            PASSK_DATA_DIR: dir,
            NO_COLOR: '1',
            PASSK_KAFKA_NAMESPACE: `passk-own-${Date.now().toString(36)}.`,
          }
        : { PASSK_BACKEND: 'embedded', PASSK_DATA_DIR: dir, NO_COLOR: '1' };
    const { cli, ok } = cliFor({ env, timeoutMs: 300_000 });
    const httpBase = await httpAgent();

    const published = await ok('dataset', 'publish', DATASET, '--dataset', 'refunds', '--json');
    expect(JSON.parse(published.stdout)).toMatchObject({ dataset_id: 'refunds', published: 6 });
    const again = await ok('dataset', 'publish', DATASET, '--dataset', 'refunds', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ published: 0 });

    const v1 = await ok('run', '--dataset', DATASET, ...agentArgs(forms.v1, 'v1', httpBase), '--k', '3');
    expect(v1.stderr).toMatch(/pinned dataset refunds version sha-\w+ \(published/);
    await ok('run', '--dataset', DATASET, ...agentArgs(forms.v2, 'v2', httpBase), '--k', '3');

    const processors = background(['process'], env);
    const followers = (['v1', 'v2', 'v3'] as const).map((v) =>
      background(
        [
          'run',
          '--dataset',
          DATASET,
          ...agentArgs(forms[v], v, httpBase),
          '--confirmations',
          '--follow',
          '--poll',
          '1s',
        ],
        env,
      ),
    );
    let failed: Awaited<ReturnType<typeof cli>>;
    let passed: Awaited<ReturnType<typeof cli>>;
    try {
      failed = await cli('gate', '--declare', '--baseline', 'own-v1', '--candidate', 'own-v2', '--wait', '240s');
      expect(failed.code, failed.stderr).toBe(1);
      expect(failed.stderr).toContain('the processors ask for confirmation runs: 1 row(s)');
      expect(failed.stdout).toMatch(/GATE FAIL: candidate own-v2 against baseline own-v1/);
      expect(failed.stdout).toMatch(/FAIL .*must-not-break rows stay stable-correct.*q2/);

      const status = await ok('gate', '--status', '--json');
      const comparisons = (JSON.parse(status.stdout) as { comparisons: { status: string; verdict?: string }[] })
        .comparisons;
      expect(comparisons).toEqual([expect.objectContaining({ status: 'decided', verdict: 'fail' })]);

      await ok('run', '--dataset', DATASET, ...agentArgs(forms.v3, 'v3', httpBase), '--k', '3');
      passed = await cli('gate', '--declare', '--baseline', 'own-v1', '--candidate', 'own-v3', '--wait', '240s');
      expect(passed.code, passed.stderr).toBe(0);
      expect(passed.stdout).toMatch(/GATE PASS: candidate own-v3 against baseline own-v1/);
      // the followers ran the confirmation attempts, and only them
      for (const f of followers) expect((f as ChildProcess & { output: () => string }).output()).not.toMatch(/Error/);
    } finally {
      for (const f of followers) expect(await stop(f)).toBe(0);
      expect(await stop(processors)).toBe(0);
    }

    // the store, read offline now that nothing holds it, gives the same verdicts, printed as the same document
    // (the rules and the full must-not-break table) as the processors' verdict that gate --declare --wait printed
    const failedDoc = await cli('gate', '--from-store', '--baseline', 'own-v1', '--candidate', 'own-v2');
    expect(failedDoc.code, failedDoc.stderr).toBe(1);
    expect(failedDoc.stdout).toContain('Must-not-break rows (');
    expect(failed.stdout).toBe(failedDoc.stdout);
    const passedDoc = await cli('gate', '--from-store', '--baseline', 'own-v1', '--candidate', 'own-v3');
    expect(passedDoc.code, passedDoc.stderr).toBe(0);
    expect(passed.stdout).toBe(passedDoc.stdout);
    const fromStore = await cli('gate', '--from-store', '--baseline', 'own-v1', '--candidate', 'own-v2', '--json');
    expect(fromStore.code).toBe(1);
    const verdict = JSON.parse(fromStore.stdout) as {
      verdict: string;
      rules: { rule: string; passed: boolean; rows?: string[] }[];
    };
    expect(verdict.verdict).toBe('fail');
    expect(verdict.rules.find((r) => !r.passed)).toMatchObject({ rule: 'must_not_break_stable_correct', rows: ['q2'] });
    expect((await cli('gate', '--from-store', '--baseline', 'own-v1', '--candidate', 'own-v3')).code).toBe(0);
  }, 600_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('your own agent, from a fresh clone to a gate verdict, CLI commands only', () => {
  flow('embedded', { v1: 'module', v2: 'cmd', v3: 'http' });
  flow('kafka', { v1: 'http', v2: 'module', v3: 'cmd' });
});
