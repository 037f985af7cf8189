import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import { candidateKey } from '../../schemas/topics.ts';
import { passk } from '../browser/processes.ts';

/**
 * Issue 26, item 1: a gate declared on two versions imported from files (no published dataset) decides.
 * Without a dataset the rows are not known, so completeness rests on each version's RunClosed, keyed by
 * (suite, its own version): for v1 and v2 on suite `gen` those land on other partitions of
 * passk.decisions than the comparison (keyed by the candidate), and the gate used to wait for ever.
 */
const trials = (): string => {
  const lines: string[] = [];
  for (const v of ['v1', 'v2'])
    for (let row = 0; row < 6; row++)
      for (let a = 0; a < 3; a++)
        lines.push(
          JSON.stringify({
            suite: 'gen',
            dataset_version: 'g1',
            row_id: `r${row}`,
            agent_version: v,
            run_id: `run-${v}`,
            attempt: a,
            // rows 0-2 pass on both versions (no suspected regression, so no confirmation run is asked for)
            passed: row < 3 || (a + row + (v === 'v2' ? 1 : 0)) % 2 === 0,
            output: 'x',
            expected: 'x',
            tags: row < 2 ? ['must_not_break'] : [],
          }),
        );
  return `${lines.join('\n')}\n`;
};

let dir: string;
const cli = (...args: string[]) =>
  passk(['--data-dir', join(dir, 'data'), ...args], { env: { NO_COLOR: '1' }, timeoutMs: 200_000 });
const DECLARE = ['gate', '--declare', '--baseline', 'v1', '--candidate', 'v2'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-gate-layout-'));
  writeFileSync(join(dir, 'trials.jsonl'), trials());
  const imported = await cli('import', join(dir, 'trials.jsonl'));
  expect(imported.code, imported.stderr).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a comparison without a published dataset', () => {
  it('is laid out across partitions: the comparison and the baseline run sit apart', () => {
    // the embedded log's default: 4 partitions per topic
    expect(partitionOf(candidateKey('gen', 'v1'), 4)).not.toBe(partitionOf(candidateKey('gen', 'v2'), 4));
  });

  it('decides under passk process, as gate --from-store does; --status says what it waited for', async () => {
    const declared = await cli(...DECLARE);
    expect(declared.code, declared.stderr).toBe(0);

    const before = JSON.parse((await cli('gate', '--status', '--json')).stdout) as {
      comparisons: Record<string, unknown>[];
    };
    expect(before.comparisons).toEqual([
      expect.objectContaining({
        status: 'open',
        row_set: 'unknown',
        rows: 6,
        dataset: { id: 'gen', published: false },
        complete: { v1: false, v2: false },
        runs: { v1: [], v2: [] },
      }),
    ]);
    const text = (await cli('gate', '--status')).stdout;
    expect(text).toContain('dataset gen has no published version g1');
    expect(text).toContain('v1: waiting: no run closed on gen g1 yet');
    expect(text).not.toContain('both versions are complete');

    const waiting = cli(...DECLARE, '--wait', '180s', '--json');
    const processed = await cli('process', '--until-caught-up');
    expect(processed.code, processed.stderr).toBe(0);
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    const live = JSON.parse(waited.stdout) as {
      type: string;
      verdict: string;
      reasons: { rule: string; passed: boolean }[];
    };
    expect(live.type).toBe('GateEvaluated');

    const offline = await cli('gate', '--from-store', '--baseline', 'v1', '--candidate', 'v2', '--json');
    expect(offline.code, offline.stderr).toBe(0);
    const store = JSON.parse(offline.stdout) as { verdict: string; rules: { rule: string; passed: boolean }[] };
    expect(live.verdict).toBe(store.verdict);
    expect(live.reasons.map((r) => [r.rule, r.passed])).toEqual(store.rules.map((r) => [r.rule, r.passed]));

    const after = JSON.parse((await cli('gate', '--status', '--json')).stdout) as {
      comparisons: Record<string, unknown>[];
    };
    expect(after.comparisons).toEqual([
      expect.objectContaining({
        status: 'decided',
        verdict: store.verdict,
        complete: { v1: true, v2: true },
        runs: {
          v1: [{ run_id: 'run-v1', trials: 18, recorded: 18 }],
          v2: [{ run_id: 'run-v2', trials: 18, recorded: 18 }],
        },
      }),
    ]);
  });
});

describe('a run pinned to a dataset id that is not published', () => {
  it('says what the live gate will do with it, and the gate then acts on the closed runs', async () => {
    const data = join(dir, 'run-data');
    const run = (...args: string[]) =>
      passk(['--data-dir', data, ...args], { env: { NO_COLOR: '1' }, timeoutMs: 200_000 });
    // published as `refunds`, run from a copy named eval.jsonl: its trials name dataset `eval`
    const published = await run('dataset', 'publish', 'examples/refund-agent/refunds.jsonl', '--dataset', 'refunds');
    expect(published.code, published.stderr).toBe(0);
    const file = join(dir, 'eval.jsonl');
    copyFileSync('examples/refund-agent/refunds.jsonl', file);
    expect(partitionOf(candidateKey('eval', 'refund-agent-v1'), 4)).not.toBe(
      partitionOf(candidateKey('eval', 'refund-agent-v2'), 4),
    );
    for (const agent of ['agent.ts', 'agent-v2.ts']) {
      const r = await run('run', '--dataset', file, '--agent', `examples/refund-agent/${agent}`, '--k', '3');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('dataset eval is not published');
      expect(r.stderr).toContain('knows no row set, so it counts a version complete once a run of it is finished');
    }
    const declared = await run('gate', '--declare', '--baseline', 'refund-agent-v1', '--candidate', 'refund-agent-v2');
    expect(declared.code, declared.stderr).toBe(0);
    const processed = await run('process', '--until-caught-up');
    expect(processed.code, processed.stderr).toBe(0);
    const status = JSON.parse((await run('gate', '--status', '--json')).stdout) as {
      comparisons: { status: string; row_set: string; complete: Record<string, boolean> }[];
    };
    // v2 lost stable-correct rows: the processors decided to ask for confirmation runs (or decided outright)
    expect(status.comparisons).toHaveLength(1);
    expect(status.comparisons[0]!.status).not.toBe('open');
    expect(status.comparisons[0]).toMatchObject({
      row_set: 'unknown',
      complete: { 'refund-agent-v1': true, 'refund-agent-v2': true },
    });
  });
});
