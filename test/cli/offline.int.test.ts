import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/** Runs `node bin/passk.mjs …` as a child process, as a user or CI would. */
const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = (name: string) => `test/fixtures/${name}`;
type Run = { code: number; stdout: string; stderr: string };
const passk = (...args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/passk.mjs', ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

const TAU_BENCH = 'examples/public-trials/tau_bench.jsonl';
const versions = ['--baseline', 'v1', '--candidate', 'v2'];

// The commands are independent: run them up front, two at a time (the CI box has two cores), then check each result.
const runs = {
  reportJson: () => passk('report', '--json', TAU_BENCH),
  reportMarkdown: () => passk('report', '--markdown', '--suite', 'airline', TAU_BENCH),
  gateFails: () => passk('gate', ...versions, '--json', fixture('refunds-breaks-mnb.jsonl')),
  gatePasses: () =>
    passk(
      'gate',
      ...versions,
      '--judge-agreement',
      '0.7',
      '--judgments',
      fixture('judgments.jsonl'),
      fixture('refunds-flaky-baseline.jsonl'),
    ),
  gatePassesJson: () => passk('gate', ...versions, '--json', fixture('refunds-flaky-baseline.jsonl')),
  gateMissingRow: () =>
    passk(
      'gate',
      ...versions,
      '--must-not-break',
      fixture('must-not-break.txt'),
      fixture('refunds-flaky-baseline.jsonl'),
    ),
  compareJson: () => passk('compare', ...versions, '--json', fixture('refunds-breaks-mnb.jsonl')),
  malformed: () => passk('report', fixture('public-mini.jsonl'), fixture('malformed.jsonl')),
  unknownVersion: () =>
    passk('compare', '--baseline', 'v1', '--candidate', 'v9', fixture('refunds-flaky-baseline.jsonl')),
  help: () => passk('gate', '--help'),
};
const results = {} as Record<keyof typeof runs, Run>;
beforeAll(async () => {
  const queue = Object.entries(runs);
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) results[next[0] as keyof typeof runs] = await next[1]();
  };
  await Promise.all([worker(), worker()]);
}, 180_000);

describe('passk report', () => {
  it('--json prints exactly {"groups": [...]} with the documented fields, reproducing τ-bench', () => {
    const r = results.reportJson;
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['groups']);
    const airline = out.groups.find((g: { suite: string }) => g.suite === 'airline');
    for (const field of [
      'suite',
      'agent_version',
      'rows',
      'trials',
      'ungraded',
      'mean_accuracy',
      'pass_at_k',
      'pass_hat_k',
      'rows_at_k',
      'flip_rate',
      'classes',
      'intervals',
    ])
      expect(airline).toHaveProperty(field);
    expect(airline).toMatchObject({
      suite: 'airline',
      agent_version: 'gpt-4o',
      rows: 50,
      trials: 200,
      ungraded: 0,
      rows_at_k: { '1': 50, '4': 50 },
    });
    expect(Object.keys(airline.classes)).toEqual(['stable_correct', 'stable_wrong', 'flip', 'unclassified']);
    expect(Object.values(airline.pass_hat_k).map((x) => (x as number).toFixed(3))).toEqual([
      '0.420',
      '0.273',
      '0.220',
      '0.200',
    ]);
    const retail = out.groups.find((g: { suite: string }) => g.suite === 'retail');
    expect(Object.values(retail.pass_hat_k).map((x) => (x as number).toFixed(3))).toEqual([
      '0.604',
      '0.491',
      '0.430',
      '0.383',
    ]);
    expect(airline.intervals.pass_hat_k['4']).toHaveLength(2);
  });

  it('--markdown prints tables with the headline numbers', () => {
    const r = results.reportMarkdown;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('## airline · dataset tau-bench · agent gpt-4o');
    expect(r.stdout).toMatch(/\| pass\^4 \| 20\.0% \|/);
    expect(r.stdout).not.toContain('retail');
  });

  it('a malformed line: exit 2, the message names file, line and field, and nothing is printed on stdout', () => {
    const r = results.malformed;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('test/fixtures/malformed.jsonl, line 3, field passed');
    expect(r.stdout).toBe('');
  });
});

describe('passk gate', () => {
  it('exits 1 when a must-not-break row breaks, with a machine-readable verdict', () => {
    const r = results.gateFails;
    expect(r.code).toBe(1);
    const v = JSON.parse(r.stdout);
    expect(v.verdict).toBe('fail');
    expect(v.rules.find((x: { rule: string }) => x.rule === 'must_not_break_stable_correct')).toMatchObject({
      passed: false,
      rows: ['r1'],
    });
    expect(v.must_not_break.find((m: { row_id: string }) => m.row_id === 'r1')).toMatchObject({
      status: 'broken',
      outcome: 'confirmed_regression',
    });
    expect(v.evidence.find((e: { row_id: string }) => e.row_id === 'r1').candidate_attempts).toHaveLength(6);
  });

  it('exits 0 when the only suspect is a flaky baseline row (and the judge agrees with humans on 3 of 4 items)', () => {
    expect(results.gatePasses.code).toBe(0);
    expect(results.gatePasses.stdout).toContain('GATE PASS');
    // the verdict leads with one plain sentence, and rules are named in words, never by their ids
    expect(results.gatePasses.stdout.split('\n')[1]).toMatch(/^\S+ may ship: all \d+ rules passed against \S+\.$/);
    expect(results.gatePasses.stdout).toMatch(
      /judges agree with human labels .*every judge agrees with human labels at least 0\.7/,
    );
    expect(results.gatePasses.stdout).not.toMatch(/judge_agreement|must_not_break_|stable_correct|not_covered/);
  });

  it('says which must-not-break rows it cannot protect (r1 and r2 flip on the baseline), once: in the verdict, or on stderr beside JSON', () => {
    const said =
      /2 must-not-break rows are not protected: the baseline is not stable-correct on them, .*: r1 \(flip 5\/6\), r2 \(flip 2\/3\)/;
    expect(results.gatePasses.stdout.replace(/\s+/g, ' ')).toMatch(said);
    // the same command printed it on stderr too, a second time on the same terminal
    expect(results.gatePasses.stderr).not.toContain('not protected');
    expect(results.gatePassesJson.stdout).not.toContain('not protected');
    expect(results.gatePassesJson.stderr).toMatch(/^passk: warning: 2 must-not-break rows are not protected/m);
  });

  it('exits 1 when a listed must-not-break row has no attempts', () => {
    expect(results.gateMissingRow.code).toBe(1);
    expect(results.gateMissingRow.stdout).toContain('r404');
    expect(results.gateMissingRow.stdout.split('\n')[1]).toMatch(/ may not ship: .*\(.*r404.*\)/);
  });

  it('--help shows examples and exit codes', () => {
    expect(results.help.code).toBe(0);
    expect(results.help.stdout).toContain('Examples:');
    expect(results.help.stdout).toContain('--must-not-break <file>');
    expect(results.help.stdout).toMatch(/0 pass, 1 fail, 2 bad input/);
  });
});

describe('passk compare', () => {
  it('--json lists suspected regressions with their confirmation and first divergent check', () => {
    const r = results.compareJson;
    expect(r.code).toBe(0);
    const [c] = JSON.parse(r.stdout).comparisons;
    expect(c.lost_stable_correct).toEqual(['r1']);
    expect(c.became_stable_correct).toEqual(['r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9']);
    expect(c.confirmation.rows[0]).toMatchObject({
      row_id: 'r1',
      outcome: 'confirmed_regression',
      first_divergence: { check: 'proof_of_purchase', position: 2 },
    });
    expect(c.candidate.mean_accuracy).toBeGreaterThan(c.baseline.mean_accuracy);
  });

  it('an agent version that is not in the files is bad input (exit 2)', () => {
    expect(results.unknownVersion.code).toBe(2);
    expect(results.unknownVersion.stderr).toMatch(
      /--candidate v9: no trials of this agent version; versions in the files: v1, v2/,
    );
  });
});
