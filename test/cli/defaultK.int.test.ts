import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { versionSummary } from '../../sinks/clickhouse/queries/histogram.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import { cliFor } from '../helpers/cli.ts';

/**
 * The default K is the attempts the source gave every row (issue 27, item 5): an Inspect log with `epochs: 3` and
 * one unscored epoch reports pass^3 over the samples that have 3 scored epochs, as Inspect does, and says how many
 * rows each k used: from the file, from the store (`report --from-store`) and in the dashboard's overview. Real
 * CLI, embedded log, real chDB.
 */
let dir: string;
let data: string;
let log: string;

// sample 1: C C C; sample 2: C C and an unscored third epoch; sample 3: C I C
const VALUES: Record<number, (string | null)[]> = { 1: ['C', 'C', 'C'], 2: ['C', 'C', null], 3: ['C', 'I', 'C'] };
const inspectLog = () => ({
  version: 2,
  status: 'success',
  eval: { run_id: 'r-epochs', task: 'epochs_demo', model: 'm1', config: { epochs: 3 }, scorers: [{ name: 'match' }] },
  samples: [1, 2, 3].flatMap((epoch) =>
    [1, 2, 3].map((id) => {
      const v = VALUES[id]![epoch - 1];
      return { id, epoch, input: `q${id}`, target: 'a', scores: { match: v === null ? null : { value: v } } };
    }),
  ),
});

// pass^3: sample 1 passes all three, sample 3 does not; sample 2 has 2 graded epochs and is left out at k = 3
const EXPECTED = { k_max: 3, rows_at_k: { '1': 3, '2': 3, '3': 2 }, pass_hat_3: 0.5 };

type Group = { k_max: number; rows_at_k: Record<string, number>; pass_hat_k: Record<string, number | null> };
const { ok } = cliFor(() => ({ dataDir: data, cwd: dir, env: { NO_COLOR: '1', COLUMNS: '80' } }));
const curveOf = (g: Group) => ({ k_max: g.k_max, rows_at_k: g.rows_at_k, pass_hat_3: g.pass_hat_k['3'] });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-defaultk-'));
  data = join(dir, 'data');
  log = join(dir, 'epochs3.json');
  writeFileSync(log, JSON.stringify(inspectLog()));
  await ok('import', log);
  await ok('process', '--until-caught-up');
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the default K of an Inspect log with epochs: 3 and one unscored epoch', () => {
  it('report on the file: pass^3 over the 2 samples with 3 scored epochs, and a line naming the rows per k', async () => {
    const json = await ok('report', '--json', '--bootstrap', '50', log);
    const [g] = (JSON.parse(json.stdout) as { groups: Group[] }).groups;
    expect(curveOf(g!)).toEqual(EXPECTED);
    const table = await ok('--width', '80', 'report', '--bootstrap', '50', log);
    expect(table.stdout).toContain('pass^3');
    expect(table.stdout.replace(/\s+/g, ' ')).toContain('Rows counted at each k differ: k=3: 2 of 3 rows');
    for (const line of table.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('report --from-store gives the same curve', async () => {
    const r = await ok('report', '--json', '--bootstrap', '50', '--from-store', '--suite', 'epochs_demo');
    const [g] = (JSON.parse(r.stdout) as { groups: Group[] }).groups;
    expect(curveOf(g!)).toEqual(EXPECTED);
  });

  it("the dashboard's overview gives it too", async () => {
    const store = await openStore(loadConfig({ dataDir: data }, {}, dir));
    try {
      const d = clickhouseDashboardData(store.client);
      const [scope] = await d.groups();
      const [g] = await d.overview({ suite: 'epochs_demo', dataset_version: scope!.dataset_version });
      expect(curveOf(g!)).toEqual(EXPECTED);
      // and so do the store's histogram queries, from every source: the processors' snapshots (written by passk
      // process above) keep the rows with ungraded attempts
      for (const from of ['trials', 'row_state', 'summaries'] as const) {
        const s = await versionSummary(store.client, { suite: 'epochs_demo', agent_version: 'm1', from });
        expect({ k_max: s.k_max, rows_at_k: s.rows_at_k, pass_hat_3: s.pass_hat_k['3'] }).toEqual(EXPECTED);
      }
    } finally {
      await store.close();
    }
  });
});
