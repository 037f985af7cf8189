import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { agentSpecOf } from '../../producers/runner/runDataset.ts';
import { runSources } from '../../sinks/clickhouse/queries/runSources.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import { agentAnswering, cliFor } from '../helpers/cli.ts';

/**
 * Suggested commands given in full (issue 32, item 4): `passk run` records its dataset file and agent on
 * RunFinished (optional fields; migration 15 stores them in `runs`), so the dashboard's comparison,
 * `passk gate --status` and `passk gate --from-store` print the confirmation run of each version as it can be run,
 * not with placeholders.
 * Real CLI, embedded log, real chDB.
 */
const ROWS = 4;
const GOOD = agentAnswering('ok');
const BROKEN = agentAnswering('wrong');

let dir: string;
let data: string;
const DATASET = 'refunds rows.jsonl'; // relative, with a space: recorded as given, quoted when printed

const { cli, ok } = cliFor(() => ({ dataDir: data, cwd: dir, env: { NO_COLOR: '1', COLUMNS: '80' } }));
const run = (agent: string, version: string) =>
  ok('run', '--dataset', DATASET, '--suite', 'refunds', '--agent', agent, '--agent-version', version, '--k', '3');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-runsources-'));
  data = join(dir, 'data');
  writeFileSync(
    join(dir, DATASET),
    Array.from({ length: ROWS }, (_, i) => JSON.stringify({ id: `r${i}`, input: `case ${i}`, expected: 'ok' })).join(
      '\n',
    ) + '\n',
  );
  await run(GOOD, 'v1');
  await run(BROKEN, 'v2');
  await ok('process', '--until-caught-up');
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the dataset file and agent of a passk run', () => {
  it("are stored per version and carried by the dashboard's comparison", async () => {
    const store = await openStore(loadConfig({ dataDir: data }, {}, dir));
    try {
      const [scope] = await clickhouseDashboardData(store.client).groups();
      const expected = {
        v1: { dataset_path: DATASET, agent_spec: GOOD },
        v2: { dataset_path: DATASET, agent_spec: BROKEN },
      };
      expect(await runSources(store.client, { ...scope!, versions: ['v1', 'v2', 'v3'] })).toEqual(expected);
      const cmp = await clickhouseDashboardData(store.client).compare({ ...scope!, baseline: 'v1', candidate: 'v2' });
      expect(cmp?.run_sources).toEqual(expected);
    } finally {
      await store.close();
    }
  });

  it('give passk gate --status the confirmation run in full', async () => {
    await ok('gate', '--declare', '--baseline', 'v1', '--candidate', 'v2', '--suite', 'refunds');
    await ok('process', '--until-caught-up');
    const status = await ok('--width', '200', 'gate', '--status');
    expect(status.stdout.replace(/ \\\n\s+/g, ' ').replace(/\s+/g, ' ')).toContain(
      `npx passk --data-dir ${data} run --dataset 'refunds rows.jsonl' --agent '${GOOD.replaceAll("'", "'\\''")}' --suite refunds --agent-version v1 --confirmations`,
    );
    expect(status.stdout).not.toContain('AGENT_OF_');
  });

  it('give the offline gate --from-store the confirmation runs in full', async () => {
    writeFileSync(join(dir, 'mnb.txt'), 'r0\nr1\n');
    const r = await cli(
      '--width',
      '200',
      'gate',
      '--from-store',
      '--baseline',
      'v1',
      '--candidate',
      'v2',
      '--must-not-break',
      'mnb.txt',
    );
    expect(r.code, r.stderr).toBe(1);
    // a command wider than the terminal is broken with ` \` (it still pastes as one): joined back here
    const out = r.stdout.replace(/ \\\n\s+/g, ' ').replace(/\s+/g, ' ');
    for (const [version, agent] of [
      ['v1', GOOD],
      ['v2', BROKEN],
    ] as const)
      expect(out).toContain(
        `npx passk --data-dir ${data} run --dataset 'refunds rows.jsonl' --agent '${agent.replaceAll("'", "'\\''")}' --suite refunds --agent-version ${version} --confirm suspects.txt --extra 3`,
      );
    expect(out).not.toContain('AGENT_OF_');
  });

  it('leaves the credentials of an agent URL out', () => {
    expect(agentSpecOf('https://bot:s3cret@agents.example.com/refunds')).toBe('https://agents.example.com/refunds');
    expect(agentSpecOf('cmd:python3 agent.py --name a@b')).toBe('cmd:python3 agent.py --name a@b');
    expect(agentSpecOf('agents/refunds.ts')).toBe('agents/refunds.ts');
  });
});
