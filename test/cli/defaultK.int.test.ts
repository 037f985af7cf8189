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
 * rows each k used: from the file, from the store (`report --from-store`) and in the dashboard's overview. A log
 * that declares `epochs: 3` keeps K 3 when an epoch is missing from it altogether, there and in `compare`'s pairs.
 * Real CLI, embedded log, real chDB.
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

/**
 * Two models' logs declaring `epochs: 3`, each with one sample epoch missing altogether (not unscored: absent), so
 * the fewest recorded is 2 and only the declaration says 3 (issue 27, what was left). m1: sample 2 lacks epoch 3;
 * m2: sample 3 does.
 */
const DECLARED: Record<string, Record<number, string>> = {
  m1: { 1: 'CCC', 2: 'CC', 3: 'CIC', 4: 'III' },
  m2: { 1: 'CCC', 2: 'CIC', 3: 'CC', 4: 'CCC' },
};
const declaredLog = (model: string) => ({
  version: 2,
  status: 'success',
  eval: { run_id: `r-${model}`, task: 'declared_demo', model, config: { epochs: 3 }, scorers: [{ name: 'match' }] },
  samples: Object.entries(DECLARED[model]!).flatMap(([id, values]) =>
    [...values].map((value, i) => ({
      id: Number(id),
      epoch: i + 1,
      input: `q${id}`,
      target: 'a',
      scores: { match: { value } },
    })),
  ),
});
// m1: pass^3 over samples 1, 3, 4 (1 + 0 + 0) / 3; one row short of the 3 declared
const DECLARED_M1 = {
  k_max: 3,
  declared_k: 3,
  rows_short: 1,
  rows_at_k: { '1': 4, '2': 4, '3': 3 },
  pass_hat_3: 1 / 3,
};
// pairs at k = 3: samples 1 and 4 have 3 on both (m1 1, 0; m2 1, 1)
const PAIRED_3 = { rows: 2, baseline: 0.5, candidate: 1, delta: 0.5 };
type Comparison = {
  baseline: { k_max: number };
  candidate: { k_max: number };
  paired: {
    k_max: number;
    pass_hat_k: Record<string, { rows: number; baseline: number; candidate: number; delta: number }>;
  };
};
const pairedOf = (c: Comparison) => {
  const { rows, baseline, candidate, delta } = c.paired.pass_hat_k['3']!;
  return { k: [c.baseline.k_max, c.candidate.k_max, c.paired.k_max], at3: { rows, baseline, candidate, delta } };
};
const PAIRED = { k: [3, 3, 3], at3: PAIRED_3 };
const declaredOf = (g: Group & { declared_k: number | null; rows_short: number }) => ({
  k_max: g.k_max,
  declared_k: g.declared_k,
  rows_short: g.rows_short,
  rows_at_k: g.rows_at_k,
  pass_hat_3: g.pass_hat_k['3'],
});
let m1: string;
let m2: string;

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
  m1 = join(dir, 'declared-m1.json');
  m2 = join(dir, 'declared-m2.json');
  writeFileSync(m1, JSON.stringify(declaredLog('m1')));
  writeFileSync(m2, JSON.stringify(declaredLog('m2')));
  await ok('import', log, m1, m2);
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
      const scope = (await d.groups()).find((g) => g.suite === 'epochs_demo');
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

describe('the default K an Inspect log declares (epochs: 3), with an epoch missing from the file altogether', () => {
  it('report on the file: K 3 (the fewest found is 2), and the row short of the declaration is named', async () => {
    const json = await ok('report', '--json', '--bootstrap', '50', m1);
    const [g] = (JSON.parse(json.stdout) as { groups: (Group & { declared_k: number; rows_short: number })[] }).groups;
    expect(declaredOf(g!)).toEqual(DECLARED_M1);
    const table = await ok('--width', '80', 'report', '--bootstrap', '50', m1);
    expect(table.stdout.replace(/\s+/g, ' ')).toContain(
      '1 of 4 rows has fewer attempts recorded than the 3 per row the source declared',
    );
  });

  it('report --from-store, the store histogram queries from every source, and the dashboard give it too', async () => {
    const r = await ok('report', '--json', '--bootstrap', '50', '--from-store', '--suite', 'declared_demo');
    const groups = (JSON.parse(r.stdout) as { groups: (Group & { declared_k: number; rows_short: number })[] }).groups;
    expect(groups.map((g) => g.k_max)).toEqual([3, 3]);
    expect(declaredOf(groups[0]!)).toEqual(DECLARED_M1);
    const store = await openStore(loadConfig({ dataDir: data }, {}, dir));
    try {
      for (const from of ['trials', 'row_state', 'summaries'] as const) {
        const s = await versionSummary(store.client, { suite: 'declared_demo', agent_version: 'm1', from });
        expect({ k_max: s.k_max, declared_k: s.declared_k, pass_hat_3: s.pass_hat_k['3'] }).toEqual({
          k_max: 3,
          declared_k: 3,
          pass_hat_3: 1 / 3,
        });
      }
      const d = clickhouseDashboardData(store.client);
      const scope = (await d.groups()).find((g) => g.suite === 'declared_demo')!;
      const where = { suite: 'declared_demo', dataset_version: scope.dataset_version };
      const [g] = await d.overview(where);
      expect(declaredOf(g!)).toEqual(DECLARED_M1);
      // the dashboard's compare: pairs up to the K both versions answer
      const c = await d.compare({ ...where, baseline: 'm1', candidate: 'm2' });
      expect(pairedOf(c as unknown as Comparison)).toEqual(PAIRED);
    } finally {
      await store.close();
    }
  });

  it('compare pairs up to K 3, on the files and from the store (it paired up to 2)', async () => {
    const files = await ok('compare', '--json', '--bootstrap', '50', '--baseline', 'm1', '--candidate', 'm2', m1, m2);
    const [onFiles] = (JSON.parse(files.stdout) as { comparisons: Comparison[] }).comparisons;
    expect(pairedOf(onFiles!)).toEqual(PAIRED);
    const stored = await ok(
      'compare',
      '--json',
      '--bootstrap',
      '50',
      '--baseline',
      'm1',
      '--candidate',
      'm2',
      '--from-store',
      '--suite',
      'declared_demo',
    );
    const [fromStore] = (JSON.parse(stored.stdout) as { comparisons: Comparison[] }).comparisons;
    expect(pairedOf(fromStore!)).toEqual(PAIRED);
    const table = await ok(
      '--width',
      '80',
      'compare',
      '--bootstrap',
      '50',
      '--baseline',
      'm1',
      '--candidate',
      'm2',
      m1,
      m2,
    );
    expect(table.stdout.replace(/\s+/g, ' ')).toContain('pass^3: over the 2 rows with 3 graded attempts on both');
  });
});
