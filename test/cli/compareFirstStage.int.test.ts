import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';
import { agentAnswering } from '../helpers/cli.ts';

/**
 * compare on a version with an adaptive run (issue 32, item 4). Before, it said "screening uses 3 / 3 attempts per
 * row" for a run whose rows got 3 attempts from its stopping rule, and took its headline numbers from a first stage
 * of 2 whatever the run's --first-k. Now the line says the version is adaptive and which first stage its numbers come
 * from: with --from-store the run's own --first-k, read from its rounds on the log.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-compare-stage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ok = async (...args: string[]) => {
  const r = await passk(['--data-dir', join(dir, 'data'), ...args], { cwd: dir, env: { NO_COLOR: '1' } });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

describe('compare with an adaptive version', () => {
  it("says the candidate is adaptive and takes its run's first stage from the log", async () => {
    writeFileSync(
      join(dir, 'rows.jsonl'),
      ['r1', 'r2', 'r3'].map((id) => JSON.stringify({ id, input: id, expected: 'ok' })).join('\n') + '\n',
    );
    const agent = ['--dataset', 'rows.jsonl', '--agent', agentAnswering('ok')];
    await ok('run', ...agent, '--agent-version', 'v1', '--k', '3');
    await ok('run', ...agent, '--agent-version', 'v2', '--adaptive', '--first-k', '3', '--max-k', '4');
    // process's own summary takes the run's first stage from the same rounds, read on its log at the end of the run
    const processed = JSON.parse(await ok('process', '--until-caught-up', '--json')) as {
      versions: { agent_version: string; first_stage?: { k: number } }[];
    };
    expect(processed.versions.map((v) => [v.agent_version, v.first_stage?.k])).toEqual([
      ['v1', undefined],
      ['v2', 3],
    ]);
    const out = (await ok('compare', '--baseline', 'v1', '--candidate', 'v2', '--from-store', '--wide')).replace(
      /\s+/g,
      ' ',
    );
    expect(out).not.toMatch(/screening uses \d+ \/ \d+ attempts per row/);
    expect(out).toContain(
      "the candidate is adaptive: screening classes a row from all its adaptive attempts (as many as the stopping rule gave it), the headline numbers and paired Δ come from each row's first 3 graded attempts (the first stage, the run's --first-k, from its rounds on the log); the baseline's screening uses 3 attempts per row",
    );
    const json = JSON.parse(await ok('compare', '--baseline', 'v1', '--candidate', 'v2', '--from-store', '--json')) as {
      comparisons: { first_stage: unknown; candidate: { k_max: number } }[];
    };
    expect(json.comparisons[0]!.first_stage).toEqual({ baseline: null, candidate: 3 });
    expect(json.comparisons[0]!.candidate.k_max).toBe(3);
  }, 300_000);
});
