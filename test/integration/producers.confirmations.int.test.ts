import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import type { ComparisonDeclared, ConfirmationRequested } from '../../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import type { PasskEvent, RunFinished, TrialRecorded } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';

// declare a comparison → the processors request confirmation runs → `passk run --confirmations` runs exactly the
// requested attempts for each version → the processors evaluate the gate with them. All on the embedded backend,
// through the CLI, as a user would.
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'passk.mjs');
const BASE = 'test/integration/producers-fixtures/gateBaseline.mjs';
const CAND = 'test/integration/producers-fixtures/gateCandidate.mjs';
const SUITE = 'confirm-suite';
let dir: string;
let data: string;
let rows: string;

const passk = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, '--data-dir', data, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
const run = (agent: string, ...more: string[]) =>
  passk(
    'run',
    '--dataset',
    rows,
    '--agent',
    agent,
    '--suite',
    SUITE,
    '--dataset-version',
    'dv1',
    '--isolation',
    'none',
    '--json',
    ...more,
  );
const processAll = () => {
  const r = passk('process', '--until-caught-up', '--json');
  expect(r.status, r.stderr).toBe(0);
};
const events = async (...topics: (typeof TOPICS)[keyof typeof TOPICS][]): Promise<PasskEvent[]> => {
  const log = createEmbeddedEventLog({ dataDir: data });
  try {
    const out: PasskEvent[] = [];
    await readLog(log, { topics }, (e) => out.push(e.event));
    return out;
  } finally {
    await log.close();
  }
};
const confirmTrials = async (version: string) =>
  (await events(TOPICS.trials)).filter(
    (e): e is TrialRecorded =>
      e.type === 'TrialRecorded' && e.run_id === 'confirm-cmp-1' && e.agent.version === version,
  );

type Summary = {
  agentVersion: string;
  status: string;
  decided: number;
  runs: {
    comparisonId: string;
    runId: string;
    rows: string[];
    attempts: number;
    summary: { done: number; skipped: number; failed: number; passed: number };
  }[];
  elsewhere: { why: string }[];
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-confirm-'));
  data = join(dir, 'data');
  rows = join(dir, 'rows.jsonl');
  writeFileSync(
    rows,
    ['x1', 'x2', 'x3'].map((x) => JSON.stringify({ id: x, input: x, expected: 'yes' })).join('\n') + '\n',
  );
  for (const agent of [BASE, CAND]) {
    const r = run(agent, '--k', '3');
    expect(r.status, r.stderr).toBe(0);
  }
  const at = Date.UTC(2026, 10, 1);
  const declared: ComparisonDeclared = {
    event_id: deterministicEventId(at, 'comparison', 'cmp-1'),
    type: 'ComparisonDeclared',
    schema_version: 1,
    occurred_at: at,
    producer: 'test',
    comparison_id: 'cmp-1',
    suite: SUITE,
    dataset_version: 'dv1',
    baseline: 'gate-base',
    candidate: 'gate-cand',
    rows: 3,
    must_not_break: ['x2'],
    confirmation_attempts: 2,
    must_not_break_extra_attempts: 1, // x2 is tagged: one attempt more than the other suspects would get
  };
  const log = createEmbeddedEventLog({ dataDir: data });
  await log.publisher.publish([declared]);
  await log.close();
  processAll();
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('passk run --confirmations acts on the processors’ confirmation requests', () => {
  it('the processors ask for confirmation of the suspected regression, and decide nothing yet', async () => {
    const decisions = await events(TOPICS.decisions);
    const requests = decisions.filter((e): e is ConfirmationRequested => e.type === 'ConfirmationRequested');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      comparison_id: 'cmp-1',
      rows: ['x2'],
      attempts: 2,
      must_not_break: { rows: ['x2'], attempts: 3 },
      run_id: 'confirm-cmp-1',
    });
    expect(decisions.some((e) => e.type === 'GateEvaluated')).toBe(false);
  });

  it('runs exactly the requested attempts for each version, once; a rerun publishes nothing', async () => {
    const base = run(BASE, '--confirmations');
    expect(base.status, base.stderr).toBe(0);
    const b = JSON.parse(base.stdout) as Summary;
    expect(b).toMatchObject({ agentVersion: 'gate-base', status: 'completed', decided: 0, elsewhere: [] });
    expect(b.runs).toMatchObject([
      {
        comparisonId: 'cmp-1',
        runId: 'confirm-cmp-1',
        rows: ['x2'],
        attempts: 2,
        summary: { done: 3, skipped: 0, passed: 3 },
      },
    ]);
    expect((await confirmTrials('gate-base')).map((t) => [t.row_id, t.attempt, t.passed])).toEqual([
      ['x2', 0, true],
      ['x2', 1, true],
      ['x2', 2, true],
    ]);

    const before = (await events(TOPICS.trials)).length;
    const again = JSON.parse(run(BASE, '--confirmations').stdout) as Summary;
    expect(again.runs).toMatchObject([{ runId: 'confirm-cmp-1', summary: { done: 0, skipped: 3 } }]);
    expect((await events(TOPICS.trials)).length).toBe(before); // not a trial, not a RunFinished

    // another dataset version is not this request's: it is named, with the flag that would match, and not run
    const other = JSON.parse(run(CAND, '--confirmations', '--dataset-version', 'dv9').stdout) as Summary;
    expect(other.runs).toEqual([]);
    expect(other.elsewhere.map((e) => e.why)).toEqual(['dataset version dv1, not dv9 (pass --dataset-version dv1)']);
    expect(await confirmTrials('gate-cand')).toEqual([]);

    const cand = JSON.parse(run(CAND, '--confirmations').stdout) as Summary;
    expect(cand.runs).toMatchObject([{ runId: 'confirm-cmp-1', summary: { done: 3, failed: 3 } }]);
    expect((await confirmTrials('gate-cand')).map((t) => [t.row_id, t.attempt, t.passed])).toEqual([
      ['x2', 0, false],
      ['x2', 1, false],
      ['x2', 2, false],
    ]);
    const finished = (await events(TOPICS.trials)).filter(
      (e): e is RunFinished => e.type === 'RunFinished' && e.run_id === 'confirm-cmp-1',
    );
    expect(finished.map((f) => [f.agent.version, f.trials]).sort()).toEqual([
      ['gate-base', 3],
      ['gate-cand', 3],
    ]);
  });

  it('the gate is then evaluated with the confirmation attempts, and nothing is left to run', async () => {
    processAll();
    const verdicts = (await events(TOPICS.decisions)).filter((e): e is GateEvaluated => e.type === 'GateEvaluated');
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({
      gate_id: 'cmp-1',
      verdict: 'fail',
      baseline: 'gate-base',
      candidate: 'gate-cand',
    });
    expect(verdicts[0]!.reasons.filter((r) => !r.passed)).toMatchObject([
      { rule: 'must_not_break_stable_correct', rows: ['x2'] },
    ]);
    const x2 = verdicts[0]!.evidence.find((e) => e.row_id === 'x2')!;
    const ids = async (v: string) => (await confirmTrials(v)).map((t) => t.event_id);
    expect(x2.baseline_attempts).toEqual(expect.arrayContaining(await ids('gate-base')));
    expect(x2.candidate_attempts).toEqual(expect.arrayContaining(await ids('gate-cand')));
    expect(x2.candidate_attempts).toHaveLength(6); // 3 screening + 2 confirmation + 1 more, must-not-break

    const after = JSON.parse(run(CAND, '--confirmations').stdout) as Summary;
    expect(after).toMatchObject({ runs: [], decided: 1, status: 'completed' });
    expect(run(CAND, '--confirmations', '--run-id', 'x').status).toBe(2);
  });
});
