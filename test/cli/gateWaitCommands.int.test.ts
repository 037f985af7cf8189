import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAnswering, cliFor } from '../helpers/cli.ts';

/**
 * Issue 32, item 4: every command the live gate suggests runs as printed. `passk gate --declare --wait` on a
 * failing verdict whose broken must-not-break row no confirmation reproduced prints the confirmation runs of both
 * versions with the dataset file and agent of their latest `passk run` (as `passk gate --status` does), not with
 * ROWS.jsonl / AGENT_OF_… placeholders. Real CLI, embedded log.
 *
 * The candidate's agent answers r0 (must-not-break) wrong in its own run and right in the confirmation run the
 * processors ask for (run id `confirm-…`), so the row is broken (not stable-correct over all attempts) and unresolved
 * (the confirmation did not reproduce the failure): the gate fails and asks for more runs on it.
 */
const DATASET = 'gate rows.jsonl'; // with a space: quoted when printed
const GOOD = agentAnswering('ok');
const FLAKY = `cmd:r=$(cat); case "$r" in *confirm-*) echo '{"output":"ok"}';; *'"r0"'*) echo '{"output":"wrong"}';; *) echo '{"output":"ok"}';; esac`;

let dir: string;
let data: string;
const { cli, ok } = cliFor(() => ({ dataDir: data, cwd: dir, env: { NO_COLOR: '1' }, timeoutMs: 200_000 }));
const DECLARE = ['gate', '--declare', '--baseline', 'v1', '--candidate', 'v2', '--suite', 'gates'];
/** A command wider than the terminal is broken with ` \` (it still pastes as one): joined back. */
const joined = (s: string) => s.replace(/ \\\n\s+/g, ' ').replace(/\s+/g, ' ');
const quoted = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-gatewait-'));
  data = join(dir, 'data');
  writeFileSync(
    join(dir, DATASET),
    ['r0', 'r1', 'r2']
      .map((id) =>
        JSON.stringify({
          id,
          input: `case ${id}`,
          expected: 'ok',
          ...(id === 'r0' ? { tags: ['must_not_break'] } : {}),
        }),
      )
      .join('\n') + '\n',
  );
  for (const [agent, version] of [
    [GOOD, 'v1'],
    [FLAKY, 'v2'],
  ] as const)
    await ok('run', '--dataset', DATASET, '--suite', 'gates', '--agent', agent, '--agent-version', version, '--k', '3');
  await ok(...DECLARE);
  await ok('process', '--until-caught-up');
}, 600_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('passk gate --declare --wait, the processors asking for confirmation runs', () => {
  it('undecided: says what the comparison waits for as gate --status does, confirmation runs in full', async () => {
    // no processors run: the comparison waits for the confirmation runs, and --wait runs out
    const r = await cli('--width', '200', ...DECLARE, '--wait', '1s');
    expect(r.code, r.stderr).toBe(5);
    const out = joined(r.stdout);
    expect(out).toMatch(/no verdict on gate-\w+ yet/);
    // the command that says more is on a line of its own, as it runs (it was inside the sentence, wrapped with it)
    expect(r.stdout).toMatch(
      new RegExp(
        `^next: npx passk --data-dir ${data} gate --status --comparison gate-\\w+ {2}# what it waits for$`,
        'm',
      ),
    );
    for (const [version, agent] of [
      ['v1', GOOD],
      ['v2', FLAKY],
    ] as const)
      expect(out).toContain(
        `still needs 3 graded attempts on r0 next: npx passk --data-dir ${data} run --dataset ${quoted(DATASET)} --agent ${quoted(agent)} --suite gates --agent-version ${version} --confirmations `,
      );
    expect(out).not.toContain('AGENT_OF_');
  }, 300_000);

  it('a failing verdict with an unresolved must-not-break row: prints the confirmation runs in full, with the dataset file and agent each version ran with', async () => {
    // the processors asked for confirmation runs: both versions answer them, then the processors decide
    for (const [agent, version] of [
      [GOOD, 'v1'],
      [FLAKY, 'v2'],
    ] as const)
      await ok(
        'run',
        '--dataset',
        DATASET,
        '--suite',
        'gates',
        '--agent',
        agent,
        '--agent-version',
        version,
        '--confirmations',
      );
    await ok('process', '--until-caught-up');
    const r = await cli('--width', '200', ...DECLARE, '--wait', '60s');
    expect(r.code, r.stderr).toBe(1);
    const out = joined(r.stdout);
    expect(out).toMatch(/GATE FAIL: candidate v2 against baseline v1/);
    expect(out).toContain('1 broken must-not-break row is unresolved');
    for (const [version, agent] of [
      ['v1', GOOD],
      ['v2', FLAKY],
    ] as const)
      expect(out).toContain(
        `npx passk --data-dir ${data} run --dataset ${quoted(DATASET)} --agent ${quoted(agent)} --suite gates --agent-version ${version} --confirm suspects.txt --extra 3`,
      );
    expect(out).not.toContain('AGENT_OF_');
    expect(out).not.toContain('ROWS.jsonl');
  }, 300_000);

  it('declared again once decided (no --wait): points at the verdict, not at what it waits for', async () => {
    const r = await cli('--width', '200', ...DECLARE);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/was declared before \(decided\); that declaration holds/);
    expect(r.stdout).toMatch(
      new RegExp(`^next: npx passk --data-dir ${data} gate --status --comparison gate-\\w+ {2}# its verdict$`, 'm'),
    );
    expect(r.stdout).not.toContain('what it waits for');
  }, 300_000);
});
