import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JudgmentRecorded, TrialRecorded } from '../../schemas/events/index.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { createRecorder } from '../sdk/recorder.ts';
import {
  classifyFailure,
  createCommandAgent,
  createHttpAgent,
  createModuleAgent,
  type Agent,
  type AgentResult,
  TrialTimeout,
} from './agents/index.ts';
import { parseDataset, type DatasetRow } from './dataset.ts';
import { createFunctionGrader, exactGrader, jsonSchemaGrader, llmJudge, regexGrader } from './graders/index.ts';
import { attemptKey, runTrials, type RunPlan } from './runTrials.ts';

const noWait = { retries: 2, initialMs: 0, factor: 1, maxMs: 0 };
const rows = (ids: string[], expected = 'ok'): DatasetRow[] => ids.map((id) => ({ id, input: id, expected }));
const identity = { suite: 's', dataset_id: 'd', dataset_version: 'v1', run_id: 'run-test', agent: { version: 'a1' } };
const plan = (over: Partial<RunPlan> = {}): RunPlan => ({
  rows: rows(['r1', 'r2', 'r3', 'r4']),
  identity,
  k: 3,
  concurrency: 4,
  timeoutMs: 1_000,
  retry: noWait,
  ...over,
});

/** An agent from a function, counting calls per row. */
const fakeAgent = (
  fn: (input: unknown, attempt: number, call: number) => Promise<AgentResult>,
): Agent & { calls: Map<string, number> } => {
  const calls = new Map<string, number>();
  return {
    kind: 'module',
    fingerprint: 'fake',
    calls,
    async run(req) {
      const n = (calls.get(req.row_id) ?? 0) + 1;
      calls.set(req.row_id, n);
      return fn(req.input, req.attempt, n);
    },
    close: async () => {},
  };
};

const runWith = async (
  agent: Agent,
  over: Partial<RunPlan> = {},
  grader = exactGrader(),
  recorded?: Map<string, boolean | null>,
) => {
  const publisher = createMemoryPublisher();
  const recorder = createRecorder({ publisher, maxWaitMs: 5 });
  const summary = await runTrials(plan(over), {
    agent,
    grader,
    recorder,
    ...(recorded ? { recorded } : {}),
    sleep: async () => {},
  });
  await recorder.close();
  const trials = publisher.events.filter((e): e is TrialRecorded => e.type === 'TrialRecorded');
  return { summary, trials, events: publisher.events };
};

describe('runTrials', () => {
  it('records exactly rows × k trials, attempts 0..k-1, each once, then marks the run finished', async () => {
    const { summary, trials, events } = await runWith(
      fakeAgent(async () => ({ output: 'ok', tokens: { input: 10, output: 2 }, cost_usd: 0.001 })),
    );
    expect(trials).toHaveLength(12);
    expect(new Set(trials.map((t) => attemptKey(t.row_id, t.attempt))).size).toBe(12);
    expect(new Set(trials.map((t) => t.attempt))).toEqual(new Set([0, 1, 2]));
    expect(trials.every((t) => t.passed === true && t.grader?.kind === 'exact' && t.latency_ms !== undefined)).toBe(
      true,
    );
    expect(summary).toMatchObject({
      status: 'completed',
      done: 12,
      passed: 12,
      costUsd: expect.closeTo(0.012, 9),
      tokens: { input: 120, output: 24 },
    });
    expect(events.at(-1)).toMatchObject({ type: 'RunFinished', status: 'completed', trials: 12, rows: 4, k: 3 });
  });

  it('skips attempts the log already holds for this run', async () => {
    const recorded = new Map<string, boolean | null>([
      [attemptKey('r1', 0), true],
      [attemptKey('r1', 1), null],
      [attemptKey('r3', 2), false],
    ]);
    const agent = fakeAgent(async () => ({ output: 'ok' }));
    const { summary, trials, events } = await runWith(agent, {}, exactGrader(), recorded);
    expect(trials).toHaveLength(9);
    expect(trials.some((t) => t.row_id === 'r1' && t.attempt === 0)).toBe(false);
    expect(summary).toMatchObject({ skipped: 3, done: 9 });
    expect(events.at(-1)).toMatchObject({ type: 'RunFinished', trials: 12, ungraded: 1 });
  });

  it('an infrastructure failure is retried, and when retries run out the trial is ungraded, not failed', async () => {
    const agent = fakeAgent(async (input, _a, call) => {
      if (input === 'r1' && call === 1) throw Object.assign(new Error('rate limited'), { status: 429 });
      if (input === 'r2') throw Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
      if (input === 'r3') throw new TrialTimeout(1000);
      if (input === 'r4') throw new TypeError('the agent has a bug');
      return { output: 'ok' };
    });
    const { trials, summary } = await runWith(agent, { k: 1 });
    const by = Object.fromEntries(trials.map((t) => [t.row_id, t]));
    expect(by.r1).toMatchObject({ passed: true });
    expect(by.r2).toMatchObject({
      passed: null,
      error_kind: 'network_econnrefused',
      failure_category: 'test_environment',
    });
    expect(by.r3).toMatchObject({ passed: null, error_kind: 'timeout' });
    expect(by.r4).toMatchObject({ passed: false, error_kind: 'agent_exception' });
    expect(agent.calls.get('r2')).toBe(3); // 1 + 2 retries
    expect(agent.calls.get('r4')).toBe(1); // the agent's own failure is not retried
    expect(summary).toMatchObject({ passed: 1, failed: 1, ungraded: 2, retries: 1 + 2 + 2 });
  });

  it('an agent that reports an infrastructure error in its result is ungraded too', async () => {
    const agent = fakeAgent(async () => ({ output: null, error: { kind: 'tool_backend_down', infra: true } }));
    const { trials } = await runWith(agent, { k: 1, rows: rows(['r1']) });
    expect(trials[0]).toMatchObject({ passed: null, error_kind: 'tool_backend_down' });
  });

  it("grades intermediate checks against the row's expected answers", async () => {
    const agent = fakeAgent(async () => ({
      output: 'ok',
      checks: [
        { name: 'window', answer: true },
        { name: 'receipt', answer: false },
        { name: 'other', answer: 1 },
      ],
    }));
    const row: DatasetRow = { id: 'r1', input: 'x', expected: 'ok', expected_checks: { window: true, receipt: true } };
    const { trials } = await runWith(agent, { k: 1, rows: [row] });
    expect(trials[0]!.checks).toEqual([
      { name: 'window', answer: true, passed: true },
      { name: 'receipt', answer: false, passed: false },
      { name: 'other', answer: 1 },
    ]);
  });

  it('stops scheduling when aborted, records what ran, and marks the run partial', async () => {
    const stop = new AbortController();
    const agent = fakeAgent(async (_i, attempt) => {
      if (attempt === 1) stop.abort();
      return { output: 'ok' };
    });
    const publisher = createMemoryPublisher();
    const recorder = createRecorder({ publisher });
    const summary = await runTrials(plan({ concurrency: 1 }), {
      agent,
      grader: exactGrader(),
      recorder,
      signal: stop.signal,
    });
    expect(summary.status).toBe('partial');
    expect(publisher.events.filter((e) => e.type === 'TrialRecorded')).toHaveLength(2);
    expect(publisher.events.at(-1)).toMatchObject({ type: 'RunFinished', status: 'partial', trials: 2 });
  });
});

describe('failure classification', () => {
  it('reads typed fields, never message text', () => {
    expect(classifyFailure({ status: 503, message: 'x' })).toMatchObject({ infra: true, kind: 'http_503' });
    expect(classifyFailure({ statusCode: 400, message: 'x' })).toMatchObject({ infra: false, kind: 'http_400' });
    expect(classifyFailure(new Error('ECONNREFUSED timeout 503'))).toMatchObject({
      infra: false,
      kind: 'agent_exception',
    });
    expect(
      classifyFailure(new Error('x', { cause: Object.assign(new Error('y'), { code: 'ETIMEDOUT' }) })),
    ).toMatchObject({ infra: true, kind: 'network_etimedout' });
    expect(classifyFailure(Object.assign(new Error('x'), { infra: true, kind: 'sandbox_lost' }))).toMatchObject({
      infra: true,
      kind: 'sandbox_lost',
    });
  });
});

describe('module agents', () => {
  const dir = join(import.meta.dirname, 'testdata');

  it('worker isolation: every trial gets a fresh module instance', async () => {
    const agent = await createModuleAgent({ path: join(dir, 'counterAgent.ts') });
    expect(agent.meta).toMatchObject({ version: 'counter-v1' });
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push(
        await agent.run(
          { row_id: 'r', attempt: i, run_id: 'x', trial_id: `t${i}`, seed: i, input: 'in' },
          { timeoutMs: 20_000 },
        ),
      );
    await agent.close();
    expect(results.map((r) => r.output)).toEqual(['in:1', 'in:1', 'in:1', 'in:1']);
    expect(results[3]!.checks).toEqual([{ name: 'attempt', answer: 3 }]);
  });

  it('workers start one at a time and a trial takes the first worker ready or free (at most concurrency of them)', async () => {
    let started = 0;
    let startingNow = 0;
    let mostStartingAtOnce = 0;
    const agent = await createModuleAgent({
      path: join(dir, 'counterAgent.ts'),
      onWorkerStart: (ready) => {
        started++;
        mostStartingAtOnce = Math.max(mostStartingAtOnce, ++startingNow);
        const done = () => startingNow--;
        ready.then(done, done);
      },
    });
    const { trials } = await runWith(agent, { rows: rows(['a', 'b', 'c', 'd', 'e', 'f']), k: 3, concurrency: 8 });
    await agent.close();
    expect(trials).toHaveLength(18);
    expect(trials.map((t) => t.output)).toEqual(trials.map((t) => `${t.row_id}:1`)); // a fresh instance each trial
    expect(mostStartingAtOnce).toBe(1); // before: all 8 workers started at once, each registering tsx
    expect(started).toBeGreaterThanOrEqual(1);
    expect(started).toBeLessThanOrEqual(8);
  });

  it('the pool still grows to the concurrency when every trial waits for the others', async () => {
    // Each trial asks the server, which answers no request before 4 are waiting: only 4 trials in flight at once,
    // each in its own worker, get any answer.
    const held: ((body: string) => void)[] = [];
    const server = createServer((_req, res) => {
      held.push((body) => res.end(body));
      if (held.length === 4) for (const answer of held.splice(0)) answer('met');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    let started = 0;
    const agent = await createModuleAgent({ path: join(dir, 'fetchAgent.mjs'), onWorkerStart: () => started++ });
    const { trials } = await runWith(agent, {
      rows: ['a', 'b', 'c', 'd'].map((id) => ({ id, input: url, expected: 'met' })),
      k: 1,
      timeoutMs: 60_000,
    });
    await agent.close();
    server.close();
    expect(trials.map((t) => `${t.row_id}:${t.output}`).sort()).toEqual(['a:met', 'b:met', 'c:met', 'd:met']);
    expect(started).toBe(4);
  });

  it('isolation none shares one instance (documented trade-off)', async () => {
    const agent = await createModuleAgent({ path: join(dir, 'counterAgent.ts'), isolation: 'none' });
    const outs = [];
    for (let i = 0; i < 3; i++)
      outs.push(
        (
          await agent.run(
            { row_id: 'r', attempt: i, run_id: 'x', trial_id: `t${i}`, seed: i, input: 'in' },
            { timeoutMs: 1000 },
          )
        ).output,
      );
    expect(outs).toEqual(['in:1', 'in:2', 'in:3']);
  });

  it('a runaway or hanging trial times out (its worker is stopped), an upstream 503 is infrastructure, a bug is a failure', async () => {
    const agent = await createModuleAgent({ path: join(dir, 'hangingAgent.mjs') });
    const { trials } = await runWith(agent, {
      k: 1,
      rows: rows(['loop', 'wait', 'infra', 'bug', 'fine'], 'fine'),
      timeoutMs: 1_500,
      retry: { ...noWait, retries: 1 },
    });
    await agent.close();
    const by = Object.fromEntries(trials.map((t) => [t.row_id, t]));
    expect(by.loop).toMatchObject({ passed: null, error_kind: 'timeout' });
    expect(by.wait).toMatchObject({ passed: null, error_kind: 'timeout' });
    expect(by.infra).toMatchObject({ passed: null, error_kind: 'http_503' });
    expect(by.bug).toMatchObject({ passed: false, error_kind: 'agent_exception' });
    expect(by.fine).toMatchObject({ passed: true, output: 'fine' });
  });
});

describe('command and HTTP agents', () => {
  it('a command gets the request on stdin and answers on stdout; exit 75 is infrastructure, another code a failure', async () => {
    const script = (body: string) =>
      `node -e ${JSON.stringify(`let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);${body}})`)}`;
    const ok = createCommandAgent({
      command: script(`console.log(JSON.stringify({output: 'got ' + r.input + ' #' + r.attempt}))`),
    });
    expect(
      (
        await ok.run(
          { row_id: 'r', attempt: 2, run_id: 'x', trial_id: 't', seed: 1, input: 'hi' },
          { timeoutMs: 20_000 },
        )
      ).output,
    ).toBe('got hi #2');
    const temp = createCommandAgent({ command: script('process.exit(75)') });
    await expect(
      temp.run({ row_id: 'r', attempt: 0, run_id: 'x', trial_id: 't', seed: 1, input: '' }, { timeoutMs: 20_000 }),
    ).rejects.toMatchObject({ kind: 'agent_tempfail', retriable: true });
    const bad = createCommandAgent({
      command: script(`console.log(JSON.stringify({output: 'no', error: {kind: 'refused'}}));process.exit(3)`),
    });
    await expect(
      bad.run({ row_id: 'r', attempt: 0, run_id: 'x', trial_id: 't', seed: 1, input: '' }, { timeoutMs: 20_000 }),
    ).rejects.toMatchObject({ kind: 'agent_exit' });
    const slow = createCommandAgent({ command: 'sleep 30' });
    await expect(
      slow.run({ row_id: 'r', attempt: 0, run_id: 'x', trial_id: 't', seed: 1, input: '' }, { timeoutMs: 300 }),
    ).rejects.toBeInstanceOf(TrialTimeout);
  });

  it('a command that cannot start, exits non-zero without a result, or writes a traceback is infrastructure, with its stderr', async () => {
    const req = { row_id: 'r', attempt: 0, run_id: 'x', trial_id: 't', seed: 1, input: '' };
    const failure = (command: string) => createCommandAgent({ command }).run(req, { timeoutMs: 20_000 });
    await expect(failure('no-such-command-passk-test')).rejects.toMatchObject({
      kind: 'agent_spawn',
      retriable: true,
      message: expect.stringMatching(/not found/),
    });
    await expect(
      failure(`node -e "console.error('line one'); console.error('line two'); process.exit(2)"`),
    ).rejects.toMatchObject({
      kind: 'agent_no_result',
      retriable: true,
      message: 'the agent exited with code 2 without a result: line one | line two',
    });
    const py = `python3 -c "import sys; print('partial'); raise ValueError('bad row')"`;
    await expect(failure(py)).rejects.toMatchObject({
      kind: 'agent_traceback',
      retriable: true,
      message: expect.stringMatching(
        /^the agent crashed with a traceback \(exit 1\): Traceback \(most recent call last\):.*ValueError: bad row$/,
      ),
    });
    await expect(failure(`node -e "throw new Error('boom')"`)).rejects.toMatchObject({ kind: 'agent_traceback' });
  });

  it('records an infrastructure failure ungraded, its stderr redacted, and stops a run whose first trials all fail the same way', async () => {
    const agent = createCommandAgent({
      command: `node -e "console.error('cannot reach ops@example.com'); process.exit(2)"`,
    });
    const { summary, trials } = await runWith(agent, {
      rows: rows(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']),
      concurrency: 1,
      stopAfter: 3,
      // a real node child: the plan's 1 s made a slow start under load a timeout, not the agent's exit (npm test)
      timeoutMs: 60_000,
    });
    expect(summary.stopped).toEqual({
      kind: 'agent_no_result',
      trials: 3,
      message: 'the agent exited with code 2 without a result: cannot reach [EMAIL]',
    });
    expect(trials).toHaveLength(3);
    expect(trials.every((t) => t.passed === null && t.error_message === summary.stopped?.message)).toBe(true);
    expect(summary.messages).toEqual({ agent_no_result: summary.stopped?.message });
  });

  it('does not stop a run whose first trials fail in different ways or pass', async () => {
    const agent = fakeAgent(async (input) => {
      if (input === 'a') throw Object.assign(new Error('down'), { status: 503 });
      if (input === 'b') throw new TrialTimeout(1);
      return { output: 'ok' };
    });
    const { summary } = await runWith(agent, { rows: rows(['a', 'b', 'c', 'd']), k: 1, concurrency: 1, stopAfter: 2 });
    expect(summary.stopped).toBeUndefined();
    expect(summary.done).toBe(4);
  });

  describe('over HTTP', () => {
    let server: Server;
    let url: string;
    let hits = 0;
    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req
          .on('data', (d) => (body += d))
          .on('end', () => {
            const r = JSON.parse(body) as { input: string };
            hits++;
            if (r.input === 'flaky' && hits % 2 === 1) return res.writeHead(503).end('busy');
            if (r.input === 'bad') return res.writeHead(422).end('no');
            res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ output: r.input.toUpperCase() }));
          });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('retries a 503 and records a 4xx as a failure', async () => {
      const agent = createHttpAgent({ url });
      const { trials } = await runWith(agent, {
        k: 1,
        rows: [
          { id: 'a', input: 'flaky', expected: 'FLAKY' },
          { id: 'b', input: 'bad', expected: 'BAD' },
        ],
        concurrency: 1,
      });
      const by = Object.fromEntries(trials.map((t) => [t.row_id, t]));
      expect(by.a).toMatchObject({ passed: true, output: 'FLAKY' });
      expect(by.b).toMatchObject({ passed: false, error_kind: 'http_422' });
    });
  });
});

describe('graders', () => {
  const grade = (g: ReturnType<typeof exactGrader>, row: DatasetRow, value: unknown) =>
    g.grade({
      row,
      value,
      output: typeof value === 'string' ? value : JSON.stringify(value),
      result: { output: value },
      trialEventId: 'E',
    });

  it('exact: trimmed strings, and JSON compared as JSON', async () => {
    expect((await grade(exactGrader(), { id: 'r', input: '', expected: 'approve' }, ' approve\n')).passed).toBe(true);
    expect((await grade(exactGrader(), { id: 'r', input: '', expected: 'approve' }, 'Approve')).passed).toBe(false);
    expect(
      (await grade(exactGrader({ caseInsensitive: true }), { id: 'r', input: '', expected: 'approve' }, 'Approve'))
        .passed,
    ).toBe(true);
    expect(
      (await grade(exactGrader(), { id: 'r', input: '', expected: { a: 1, b: [2] } }, '{"b":[2],"a":1}')).passed,
    ).toBe(true);
    expect(() => exactGrader().check({ id: 'r', input: '' })).toThrow(/no "expected"/);
  });

  it('regex and JSON Schema (Ajv)', async () => {
    expect(
      (await grade(regexGrader({ flags: 'i' }), { id: 'r', input: '', expected: '^refund(ed)?$' }, 'REFUNDED')).passed,
    ).toBe(true);
    expect(() => regexGrader().check({ id: 'r', input: '', expected: '(' })).toThrow(/invalid regular expression/);
    const schema = { type: 'object', required: ['decision'], properties: { decision: { enum: ['approve', 'deny'] } } };
    const g = jsonSchemaGrader({ schema });
    expect((await grade(g, { id: 'r', input: '' }, '{"decision":"deny"}')).passed).toBe(true);
    expect((await grade(g, { id: 'r', input: '' }, '{"decision":"maybe"}')).passed).toBe(false);
    expect((await grade(g, { id: 'r', input: '' }, 'not json')).passed).toBe(false);
  });

  it('a custom grader module, with its version recorded', async () => {
    const g = await createFunctionGrader(join(import.meta.dirname, 'testdata', 'grader.mjs'));
    expect(g.spec).toEqual({ kind: 'function', id: 'grader.mjs', version: 'g-7' });
    expect(await grade(g, { id: 'r', input: '', expected: 'abcd' }, 'wxyz')).toEqual({ passed: true, score: 0.4 });
  });

  describe('LLM judge over an OpenAI-compatible endpoint (a local server started by this test; no hosted model)', () => {
    let server: Server;
    let baseUrl: string;
    const seen: { model: string; messages: { role: string; content: string }[]; auth?: string }[] = [];
    let failNext = 0;
    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req
          .on('data', (d) => (body += d))
          .on('end', () => {
            const r = JSON.parse(body) as { model: string; messages: { role: string; content: string }[] };
            seen.push({ ...r, ...(req.headers.authorization ? { auth: req.headers.authorization } : {}) });
            if (failNext > 0) return (failNext--, res.writeHead(502).end('bad gateway'));
            const answer = r.messages[1]!.content.includes('Answer to grade:\napprove') ? 'pass' : 'fail';
            res.writeHead(200, { 'content-type': 'application/json' }).end(
              JSON.stringify({
                choices: [
                  {
                    message: {
                      role: 'assistant',
                      content: `Sure:\n{"verdict": "${answer}", "score": ${answer === 'pass' ? 0.9 : 0.1}, "reason": "r"}`,
                    },
                  },
                ],
              }),
            );
          });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('grades each trial, records rubric and judge versions, and retries a 502', async () => {
      const judge = llmJudge({
        endpoint: { baseUrl, model: 'local-judge', apiKey: 'k' },
        rubric: 'Approve only eligible refunds.',
        rubricVersion: 'rubric-3',
        judgeVersion: 'j-1',
      });
      failNext = 1;
      const agent = fakeAgent(async (input) => ({ output: input === 'r1' ? 'approve' : 'deny' }));
      const { trials, events } = await runWith(
        agent,
        { k: 1, rows: rows(['r1', 'r2'], 'approve'), concurrency: 1 },
        judge,
      );
      const by = Object.fromEntries(trials.map((t) => [t.row_id, t]));
      expect(by.r1).toMatchObject({
        passed: true,
        score: 0.9,
        grader: { kind: 'llm_judge', id: 'local-judge', version: 'j-1+rubric.rubric-3' },
      });
      expect(by.r2).toMatchObject({ passed: false, score: 0.1 });
      const judgments = events.filter((e): e is JudgmentRecorded => e.type === 'JudgmentRecorded');
      expect(judgments.map((j) => [j.item_id, j.label, j.rubric_version, j.judge.version])).toEqual([
        [by.r1!.event_id, 'pass', 'rubric-3', 'j-1'],
        [by.r2!.event_id, 'fail', 'rubric-3', 'j-1'],
      ]);
      expect(seen[0]).toMatchObject({ model: 'local-judge', auth: 'Bearer k' });
      expect(seen[0]!.messages[1]!.content).toContain('Rubric:\nApprove only eligible refunds.');
      expect(seen).toHaveLength(3); // one 502 retried
    });

    it('a judge that cannot be reached leaves the trial ungraded', async () => {
      const judge = llmJudge({
        endpoint: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 2_000 },
        rubric: 'r',
      });
      const { trials } = await runWith(
        fakeAgent(async () => ({ output: 'approve' })),
        { k: 1, rows: rows(['r1']) },
        judge,
      );
      expect(trials[0]).toMatchObject({ passed: null, error_kind: 'judge_unavailable', output: 'approve' });
    });
  });
});

describe('datasets', () => {
  it('reads rows, versions them by content, and names the line of a bad row', () => {
    const d = parseDataset(
      '{"id": 1, "input": "a", "expected": "x"}\n\n{"row_id": "r2", "input": {"q": 1}}\n',
      'rows.jsonl',
    );
    expect(d.rows.map((r) => r.id)).toEqual(['1', 'r2']);
    expect(d).toMatchObject({ name: 'rows', version: expect.stringMatching(/^sha-[0-9a-f]{12}$/) });
    expect(() => parseDataset('{"id": "a", "input": 1}\n{"input": 2}\n', 'rows.jsonl')).toThrow(
      /rows\.jsonl, line 2, field id/,
    );
    expect(() => parseDataset('{"id": "a", "input": 1}\n{"id": "a", "input": 2}\n', 'rows.jsonl')).toThrow(
      /already used on line 1/,
    );
  });
});
