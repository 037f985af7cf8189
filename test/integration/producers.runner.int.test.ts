import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import type { PasskEvent, RunFinished, TrialRecorded } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'passk.mjs');
const DATASET = join(ROOT, 'examples', 'refund-agent', 'refunds.jsonl');
const ROWS = 24;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-run-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const passk = (dataDir: string, args: string[]) =>
  spawnSync(process.execPath, [BIN, '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });

const events = async (dataDir: string): Promise<PasskEvent[]> => {
  const log = createEmbeddedEventLog({ dataDir });
  try {
    const out: PasskEvent[] = [];
    await readLog(log, { topics: [TOPICS.trials] }, (e) => out.push(e.event));
    return out;
  } finally {
    await log.close();
  }
};
const trialsOf = (es: PasskEvent[]) => es.filter((e): e is TrialRecorded => e.type === 'TrialRecorded');

describe('passk run on the example refund agent', () => {
  it('k=3 records exactly rows × 3 trials, with checks, tokens and cost; running it again records nothing new', async () => {
    const data = join(dir, 'plain');
    const run = passk(data, [
      'run',
      '--dataset',
      DATASET,
      '--agent',
      'examples/refund-agent/agent.ts',
      '--k',
      '3',
      '--json',
    ]);
    expect(run.status, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { done: number; status: string; wallMs: number };
    expect(summary).toMatchObject({ status: 'completed', done: ROWS * 3 });
    const trials = trialsOf(await events(data));
    expect(trials).toHaveLength(ROWS * 3);
    expect(new Set(trials.map((t) => `${t.row_id}/${t.attempt}`)).size).toBe(ROWS * 3);
    expect(
      trials.every(
        (t) =>
          t.agent.version === 'refund-agent-v1' &&
          t.checks?.length === 3 &&
          t.tokens &&
          t.cost_usd! > 0 &&
          t.latency_ms !== undefined,
      ),
    ).toBe(true);
    expect(trials.every((t) => t.checks!.every((c) => typeof c.passed === 'boolean'))).toBe(true);
    const again = passk(data, [
      'run',
      '--dataset',
      DATASET,
      '--agent',
      'examples/refund-agent/agent.ts',
      '--k',
      '3',
      '--json',
    ]);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ skipped: ROWS * 3, done: 0, status: 'completed' });
    expect(trialsOf(await events(data))).toHaveLength(ROWS * 3);
  });

  it('killed midway (SIGKILL), then run again: completes with no duplicates', async () => {
    const data = join(dir, 'killed');
    const args = [
      '--data-dir',
      data,
      'run',
      '--dataset',
      DATASET,
      '--agent',
      'test/integration/producers-fixtures/slowRefundAgent.ts',
      '--k',
      '3',
      '--concurrency',
      '2',
      '--json',
    ];
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, s) => r(s)));
    let seen = 0;
    for (const started = Date.now(); Date.now() - started < 120_000;) {
      await new Promise((r) => setTimeout(r, 300));
      seen = trialsOf(await events(data).catch(() => [])).length;
      if (seen >= 10) break;
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const beforeResume = trialsOf(await events(data));
    expect(beforeResume.length).toBeGreaterThanOrEqual(10);
    expect(beforeResume.length).toBeLessThan(ROWS * 3);

    const resumed = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      status: 'completed',
      skipped: beforeResume.length,
      done: ROWS * 3 - beforeResume.length,
    });
    const all = await events(data);
    const trials = trialsOf(all);
    expect(trials).toHaveLength(ROWS * 3);
    expect(new Set(trials.map((t) => t.event_id)).size).toBe(ROWS * 3);
    expect(new Set(trials.map((t) => `${t.row_id}/${t.attempt}`)).size).toBe(ROWS * 3);
    const finished = all.filter((e): e is RunFinished => e.type === 'RunFinished');
    expect(finished.map((f) => [f.status, f.trials])).toEqual([['completed', ROWS * 3]]);
  });

  it('an agent that times out or fails for infrastructure yields ungraded trials, not failures', async () => {
    const data = join(dir, 'infra');
    const rows = join(dir, 'infra.jsonl');
    writeFileSync(
      rows,
      [
        '{"id": "slow", "input": "slow", "expected": "x"}',
        '{"id": "down", "input": "down", "expected": "x"}',
        '{"id": "ok", "input": "ok", "expected": "x"}',
      ].join('\n'),
    );
    const agent = `cmd:node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);if(r.input==='slow')setTimeout(()=>{},60000);else if(r.input==='down')process.exit(75);else console.log('x')})"`;
    const run = passk(data, [
      'run',
      '--dataset',
      rows,
      '--agent',
      agent,
      '--k',
      '2',
      // long enough for the quick agent's node to start under CI's load (at 1.5 s it timed out once, load ~20);
      // the slow agent sleeps 60 s, far past it either way
      '--timeout',
      '6s',
      '--retries',
      '1',
      '--json',
    ]);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      passed: 2,
      failed: 0,
      ungraded: 4,
      retries: 4,
      errors: { timeout: 2, agent_tempfail: 2 },
    });
    const by = trialsOf(await events(data));
    expect(by.filter((t) => t.row_id === 'slow').map((t) => [t.passed, t.error_kind])).toEqual([
      [null, 'timeout'],
      [null, 'timeout'],
    ]);
    expect(
      by
        .filter((t) => t.row_id === 'down')
        .every((t) => t.passed === null && t.failure_category === 'test_environment'),
    ).toBe(true);
  });

  it('a broken command agent (a typo in its file name) stops the run with exit 3 and its stderr, never a verdict', async () => {
    const data = join(dir, 'typo');
    const run = passk(data, [
      'run',
      '--dataset',
      DATASET,
      '--agent',
      'cmd:python3 agnt.py',
      '--k',
      '5',
      '--retries',
      '1',
    ]);
    expect(run.status, run.stderr).toBe(3);
    expect(run.stdout).toMatch(
      /agent_no_result: the agent exited with code 2 without a result: .*can't open file .*agnt\.py/,
    );
    expect(run.stdout).toMatch(/stopped: the first 5 trials were all ungraded \(agent_no_result\)/);
    const trials = trialsOf(await events(data));
    // the budget was not spent: the first 5, and those already in flight (concurrency 8), not rows × k = 120
    expect(trials.length).toBeGreaterThanOrEqual(5);
    expect(trials.length).toBeLessThanOrEqual(12);
    expect(trials.every((t) => t.passed === null && t.error_kind === 'agent_no_result')).toBe(true);
    expect(trials[0]!.error_message).toMatch(/can't open file/);
  });

  it('takes the judge endpoint from passk.config.json, with env over the file and flags over env (a local server; no hosted model)', async () => {
    const seen: { model: string; auth?: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req
        .on('data', (d) => (body += d))
        .on('end', () => {
          seen.push({
            model: (JSON.parse(body) as { model: string }).model,
            ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              choices: [{ message: { role: 'assistant', content: '{"verdict": "pass", "score": 1}' } }],
            }),
          );
        });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const config = join(dir, 'judge.config.json');
      writeFileSync(config, JSON.stringify({ judge: { url, model: 'file-model', apiKey: 'file-key' } }));
      const rows = join(dir, 'judged.jsonl');
      writeFileSync(rows, '{"id": "j1", "input": "hello"}\n');
      writeFileSync(join(dir, 'rubric.md'), 'Say pass when the answer greets back.');
      const judged = (data: string, env: NodeJS.ProcessEnv, ...more: string[]) =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          // async: this process serves the judge while the run waits for it
          const child = spawn(
            process.execPath,
            [
              BIN,
              '--config',
              config,
              '--data-dir',
              join(dir, data),
              'run',
              '--dataset',
              rows,
              '--agent',
              'cmd:echo hi',
              '--k',
              '1',
              '--grader',
              'judge',
              '--rubric',
              join(dir, 'rubric.md'),
              '--json',
              ...more,
            ],
            {
              cwd: ROOT,
              env: { ...process.env, PASSK_JUDGE_URL: '', PASSK_JUDGE_MODEL: '', PASSK_JUDGE_API_KEY: '', ...env },
            },
          );
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d) => (stdout += d));
          child.stderr.on('data', (d) => (stderr += d));
          child.on('exit', (code) => resolve({ code, stdout, stderr }));
        });
      const fromFile = await judged('judge-file', {});
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(JSON.parse(fromFile.stdout)).toMatchObject({ passed: 1 });
      const fromEnv = await judged('judge-env', { PASSK_JUDGE_MODEL: 'env-model', PASSK_JUDGE_API_KEY: 'env-key' });
      expect(fromEnv.code, fromEnv.stderr).toBe(0);
      const fromFlag = await judged('judge-flag', { PASSK_JUDGE_MODEL: 'env-model' }, '--judge-model', 'flag-model');
      expect(fromFlag.code, fromFlag.stderr).toBe(0);
      expect(seen).toEqual([
        { model: 'file-model', auth: 'Bearer file-key' },
        { model: 'env-model', auth: 'Bearer env-key' },
        { model: 'flag-model', auth: 'Bearer file-key' },
      ]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
