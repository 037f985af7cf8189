import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import { agentAnswering, cliFor } from '../helpers/cli.ts';

/**
 * A mistaken run never becomes a version (issue 32, item 2): a broken agent's run (20 failed trials) is
 * retracted, and every number is what it was before the run — the store's report, `check`, the dashboard's
 * data — in the live fold, after a restart, and after a rebuild of the store from the log. Real CLI, embedded
 * log, real chDB.
 */
const ROWS = 20;
const GOOD = agentAnswering('ok');
const BROKEN = agentAnswering('wrong');

let dir: string;
let data: string;
let dataset: string;
let before: string;

const { cli, ok } = cliFor(() => ({ dataDir: data, cwd: dir, env: { NO_COLOR: '1', COLUMNS: '80' } }));
const run = (agent: string, version: string, runId: string, k: number) =>
  ok(
    'run',
    '--dataset',
    dataset,
    '--suite',
    'refunds',
    '--agent',
    agent,
    '--agent-version',
    version,
    '--run-id',
    runId,
    '--k',
    String(k),
    '--json',
  );
const process_ = () => ok('process', '--until-caught-up');
const storeReport = async () => (await ok('report', '--json', '--from-store', '--suite', 'refunds')).stdout;
type Report = { groups: { agent_version: string; trials: number; rows: number }[] };
const versionsOf = (report: string) =>
  (JSON.parse(report) as Report).groups.map((g) => [g.agent_version, g.rows, g.trials]);

/** The dashboard's data over the store (what /api/groups, /api/overview and /api/compare answer). */
const dashboard = async () => {
  const store = await openStore(loadConfig({ dataDir: data }, {}, dir));
  try {
    const d = clickhouseDashboardData(store.client);
    const groups = await d.groups();
    const overview = await d.overview({ suite: 'refunds', dataset_version: groups[0]!.dataset_version });
    return {
      groups: groups.map((g) => [g.agent_version, g.rows, g.trials]),
      overview: overview.map((g) => [g.agent_version, g.trials, g.pass_at_1]),
    };
  } finally {
    await store.close();
  }
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-retract-'));
  data = join(dir, 'data');
  dataset = join(dir, 'refunds.jsonl');
  writeFileSync(
    dataset,
    Array.from({ length: ROWS }, (_, i) => JSON.stringify({ id: `r${i}`, input: `case ${i}`, expected: 'ok' })).join(
      '\n',
    ) + '\n',
  );
  await run(GOOD, 'v1', 'good', 3);
  await process_();
  before = await storeReport();
  expect(versionsOf(before)).toEqual([['v1', ROWS, 3 * ROWS]]);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('passk retract', () => {
  it('refuses an unknown run, naming it and the latest runs', async () => {
    const r = await cli('retract', '--run', 'no-such-run', '--reason', 'typo');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no run "no-such-run" in the event log');
    expect(r.stderr).toContain('latest runs: good');
  });

  it("a broken run on a version: retracted, the version's numbers are those from before the run", async () => {
    const broken = JSON.parse((await run(BROKEN, 'v1', 'broken', 1)).stdout) as { failed: number };
    expect(broken.failed).toBe(ROWS);
    await process_();
    const during = await storeReport();
    expect(versionsOf(during)).toEqual([['v1', ROWS, 4 * ROWS]]);

    const dry = await ok(
      '--width',
      '80',
      'retract',
      '--run',
      'broken',
      '--reason',
      'the agent answered a constant',
      '--dry-run',
    );
    expect(dry.stdout).toContain('Would retract run broken');
    expect(dry.stdout).toContain(`${ROWS} trials on ${ROWS} rows would no longer count`);
    for (const line of dry.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    await process_();
    expect(await storeReport()).toBe(during);

    const r = await ok(
      'retract',
      '--run',
      'broken',
      '--reason',
      'the agent answered a constant',
      '--by',
      'ana',
      '--json',
    );
    expect(JSON.parse(r.stdout)).toMatchObject({
      run_id: 'broken',
      rows: ROWS,
      trials: ROWS,
      retracted_by: 'ana',
      published: ROWS,
      versions: [{ suite: 'refunds', agent_version: 'v1', rows: ROWS, trials: ROWS, failed: ROWS, passed: 0 }],
    });
    await process_();
    expect(await storeReport()).toBe(before);
    await ok('check');

    const again = await cli('retract', '--run', 'broken', '--reason', 'twice');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('run "broken" is already retracted (by ana at ');
  });

  it('a version whose only run is retracted is gone, from the report and the dashboard; a rebuild gives the same', async () => {
    await run(BROKEN, 'v2', 'typo', 1);
    await process_();
    expect(versionsOf(await storeReport())).toEqual([
      ['v1', ROWS, 3 * ROWS],
      ['v2', ROWS, ROWS],
    ]);
    expect((await dashboard()).groups).toContainEqual(['v2', ROWS, ROWS]);

    await ok('retract', '--run', 'typo', '--suite', 'refunds', '--reason', 'typo in the agent command');
    // process's summary leaves the gone version out too (it listed v2 with rows 0, trials 0)
    const folded = JSON.parse((await ok('process', '--until-caught-up', '--json')).stdout) as {
      versions: { agent_version: string; trials: number }[];
    };
    expect(folded.versions.map((v) => v.agent_version)).toEqual(['v1']);
    expect((await process_()).stdout).not.toMatch(/\bv2\b/);
    expect(await storeReport()).toBe(before);
    // a gate over the retracted version says so: the run is named, and the version has no trials to gate
    const gate = await cli('gate', '--from-store', '--suite', 'refunds', '--baseline', 'v1', '--candidate', 'v2');
    expect(gate.stderr).toContain(`passk: run typo of refunds v2 is retracted (${ROWS} trials on ${ROWS} rows, by `);
    expect(gate.stderr).toContain(': typo in the agent command); not counted');
    expect(gate.code).toBe(2);
    const shown = await dashboard();
    expect(shown.groups).toEqual([['v1', ROWS, 3 * ROWS]]);
    expect(shown.overview).toEqual([['v1', 3 * ROWS, 1]]);
    await ok('check');

    // the store is a projection of the log: replayed from nothing, the retractions apply at the same place
    rmSync(join(data, 'store'), { recursive: true });
    const p = await process_();
    expect(p.stderr).toContain('rebuilding it from the log first');
    expect(await storeReport()).toBe(before);
    expect(await dashboard()).toEqual(shown);
    await ok('check');
  });
});
