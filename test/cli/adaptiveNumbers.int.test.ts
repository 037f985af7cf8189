import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../browser/processes.ts';
import { cliFor } from '../helpers/cli.ts';

/**
 * The README's adaptive steps on the embedded backend (examples/refund-agent, both versions `run --adaptive`, then
 * `process`): an adaptive run gives rows 2 to 8 attempts by its stopping rule, so every source of a version's headline
 * numbers must take them from the same attempts, each row's first stage (docs/adaptive.md). The `process` summary,
 * `report --from-store`, `compare --from-store` (each version's numbers) and the dashboard's /api/overview agree.
 * Before, the process summary and the overview pooled every attempt (refund-agent-v1: mean accuracy 84.0%, flip rate
 * 31.3% with the 2-attempt flips unclassified), compare screened the first 3 (76.6%), report took the first stage
 * (72.9%, 37.5%).
 */
const D = 'examples/refund-agent';
const dirs: string[] = [];
const children: ChildProcess[] = [];

type Headline = {
  agent_version: string;
  mean_accuracy: number | null;
  pass_at_k: Record<string, number | null>;
  pass_hat_k: Record<string, number | null>;
  flip_rate: number | null;
};
const headline = (g: Headline) => ({
  agent_version: g.agent_version,
  mean_accuracy: g.mean_accuracy,
  pass_at_k: g.pass_at_k,
  pass_hat_k: g.pass_hat_k,
  flip_rate: g.flip_rate,
});

const serve = (env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> => {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'passk.mjs'), 'serve', '--port', '0', '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.includes('"url"'));
      if (line) resolve({ url: (JSON.parse(line) as { url: string }).url, child });
    });
    child.once('close', (code) => reject(new Error(`passk serve exited ${code}: ${out}`)));
  });
};
const stopped = (child: ChildProcess): Promise<unknown> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('close', resolve);
    child.kill('SIGTERM');
  });

describe('an adaptive run: one set of headline numbers in every source', () => {
  it('process summary, report --from-store, compare --from-store and /api/overview agree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-adaptive-numbers-'));
    dirs.push(dir);
    const env: NodeJS.ProcessEnv = { PASSK_BACKEND: 'embedded', PASSK_DATA_DIR: dir, NO_COLOR: '1' };
    const { ok } = cliFor({ env, timeoutMs: 300_000 });
    await ok('dataset', 'publish', `${D}/refunds.jsonl`, '--dataset', 'refunds');
    for (const agent of ['agent.ts', 'agent-v2.ts'])
      await ok('run', '--dataset', `${D}/refunds.jsonl`, '--agent', `${D}/${agent}`, '--adaptive', '--max-k', '8');
    const processed = JSON.parse((await ok('process', '--until-caught-up', '--json')).stdout) as {
      versions: (Headline & { suite: string; dataset_version: string; first_stage?: { k: number } })[];
    };
    const report = JSON.parse((await ok('report', '--from-store', '--json')).stdout) as {
      groups: (Headline & { first_stage?: { k: number } })[];
    };
    const compared = JSON.parse(
      (await ok('compare', '--baseline', 'refund-agent-v1', '--candidate', 'refund-agent-v2', '--from-store', '--json'))
        .stdout,
    ) as { comparisons: { baseline: Headline; candidate: Headline }[] };
    const { url, child } = await serve(env);
    const { suite, dataset_version } = processed.versions[0]!;
    const overview = (await (
      await fetch(`${url}api/overview?suite=${suite}&dataset_version=${dataset_version}`)
    ).json()) as Headline[];
    await stopped(child);

    // every version of the run is adaptive: its headline numbers are the first stage's (k = 2)
    expect(report.groups.map((g) => g.first_stage?.k)).toEqual([2, 2]);
    expect(processed.versions.map((v) => v.first_stage?.k)).toEqual([2, 2]);
    const fromReport = report.groups.map(headline);
    expect(processed.versions.map(headline)).toEqual(fromReport);
    expect(overview.map(headline)).toEqual(fromReport);
    const [comparison] = compared.comparisons;
    expect([headline(comparison!.baseline), headline(comparison!.candidate)]).toEqual(fromReport);
    // a first stage of 2 graded attempts a row: mean accuracy is pass@1, and the flip rate is over every row
    for (const g of fromReport) expect(g.mean_accuracy).toBe(g.pass_at_k['1']);
  }, 600_000);
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
