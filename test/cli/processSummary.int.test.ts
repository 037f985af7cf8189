import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFor } from '../helpers/cli.ts';

/**
 * `passk process`'s summary counts what `passk report --from-store` counts (a new user's trial: after confirmation
 * runs, process said 27 trials / 77.8% where the report said 24 / 87.5%): attempts of confirmation runs are left out
 * of both by default. Eight rows of three planned attempts (one row flips), then a confirmation run of three failing
 * attempts on r1. Real CLI, embedded log, real chDB.
 */
let dir: string;
const { ok } = cliFor(() => ({ dataDir: join(dir, 'data'), cwd: dir, env: { NO_COLOR: '1', COLUMNS: '200' } }));

const trial = (row: number, run_id: string, attempt: number, passed: boolean) =>
  JSON.stringify({
    suite: 's',
    dataset_version: 'd1',
    row_id: `r${row}`,
    agent_version: 'v1',
    run_id,
    attempt,
    passed,
  });
const TRIALS = [
  ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((row) => [0, 1, 2].map((a) => trial(row, 'run-1', a, !(row === 8 && a === 1)))),
  ...[0, 1, 2].map((a) => trial(1, 'confirm-r1', a, false)),
];

type Numbers = {
  rows: number;
  trials: number;
  mean_accuracy: number;
  pass_hat_k: Record<string, number>;
  flip_rate: number;
  confirmation_attempts: { count: number; counted: boolean };
};
const numbersOf = (n: Numbers) => ({
  rows: n.rows,
  trials: n.trials,
  mean_accuracy: n.mean_accuracy,
  pass_hat_k: n.pass_hat_k,
  flip_rate: n.flip_rate,
  confirmation_attempts: n.confirmation_attempts,
});

let processText: string;
let processJson: { versions: Numbers[]; records: number };
let againText: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-process-summary-'));
  const file = join(dir, 'trials.jsonl');
  writeFileSync(file, TRIALS.join('\n') + '\n');
  await ok('import', file);
  processText = (await ok('process', '--until-caught-up')).stdout;
  // run again with nothing new to fold: the summary is the restored rows' (it printed no versions: versions: [])
  processJson = JSON.parse((await ok('process', '--until-caught-up', '--json')).stdout) as typeof processJson;
  againText = (await ok('process', '--until-caught-up')).stdout;
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("passk process's summary after confirmation runs", () => {
  it('gives the numbers report --from-store gives, in JSON: confirmation attempts left out (24 trials, not 27)', async () => {
    const report = JSON.parse((await ok('report', '--from-store', '--json', '--bootstrap', '50')).stdout) as {
      groups: Numbers[];
    };
    expect(processJson.versions.map(numbersOf)).toEqual(report.groups.map(numbersOf));
    expect(numbersOf(processJson.versions[0]!)).toMatchObject({
      trials: 24,
      mean_accuracy: 23 / 24,
      confirmation_attempts: { count: 3, counted: false },
    });
  });

  it('and in the terminal: the same trials, mean accuracy, pass^k and flip rate as the report prints', async () => {
    const report = (await ok('report', '--from-store', '--bootstrap', '50')).stdout;
    const cell = (line: string) => line.split('│').map((c) => c.trim());
    const row = cell(processText.split('\n').find((l) => l.includes('│ v1'))!);
    const [trials, mean, curve, flip] = row.slice(5, 9);
    expect(report).toContain(`; ${trials} trials;`);
    const metric = (name: string) => cell(report.split('\n').find((l) => l.startsWith(`│ ${name} `))!)[2];
    expect(metric('mean accuracy')).toBe(mean);
    expect(metric('pass^3')).toBe(curve!.split(' / ').at(-1));
    expect(metric('flip rate')).toBe(flip);
    expect(processText).toContain('3 attempts of confirmation runs left out');
  });

  it('is the same when run again with nothing new to fold: the versions restored, said as such', () => {
    expect(processJson.records).toBe(0);
    expect(processJson.versions).toHaveLength(1);
    const table = (t: string) => t.split('\n').filter((l) => l.includes('│'));
    expect(table(againText)).toEqual(table(processText));
    expect(againText).toContain('nothing new to fold: no trial record since the last run');
    expect(againText).toContain('the version as restored');
    expect(againText).toContain('3 attempts of confirmation runs left out');
    expect(processText).not.toContain('nothing new');
  });
});
