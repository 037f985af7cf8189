import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { migrate, openClickHouse, trialToRow } from '../../sinks/clickhouse/index.ts';
import { explorerCheckNames, explorerCounts, explorerTrials } from '../../sinks/clickhouse/queries/explorerCounts.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import { RowQuery } from '../../web/rowPage.ts';
import { rowPageFromStore } from '../../web/storeRows.ts';
import { trial } from '../generatedStore.ts';
import { bareGroupBy } from '../dashboardKit.ts';

/** Where a cold /api/rows page spends its time: each query of web/storeRows.ts timed alone (bench/dashboard.ts's trials). */
const ROWS = Number(process.env.ROWS ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), 'passk-rows-split-'));
const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk' });
try {
  await migrate(store.client);
  for (let r0 = 0; r0 < ROWS; r0 += 2000) {
    const lines: string[] = [];
    for (let row = r0; row < Math.min(ROWS, r0 + 2000); row++)
      for (let v = 0; v < 2; v++) for (let a = 0; a < 5; a++) lines.push(JSON.stringify(trialToRow(trial(row, v, a))));
    await store.insertJsonRows('trials', Buffer.from(lines.join('\n') + '\n'));
  }
  const scope = { suite: 'bench', dataset_version: 'd1' };
  const time = async (what: string, f: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await f();
      ms.push(performance.now() - t);
    }
    console.log(`${what}: ${ms.map((x) => x.toFixed(0)).join(', ')} ms`);
  };
  const ids = Array.from({ length: 200 }, (_, i) => `row-${i * 7}`);
  await time('bare GROUP BY', () => bareGroupBy(store.client));
  await time('explorerCounts', () => explorerCounts(store.client, scope));
  await time('explorerCheckNames', () => explorerCheckNames(store.client, scope));
  await time('page trials (200 rows), every column (loadTrialsForReport)', () =>
    loadTrialsForReport(store.client, { suites: ['bench'], datasetVersions: ['d1'], rowIds: ids }),
  );
  await time("page trials (200 rows), the explorer's columns (explorerTrials)", () =>
    explorerTrials(store.client, { ...scope, rowIds: ids }),
  );
  for (const cond of ['has({ids:Array(String)}, row_id)', 'row_id IN (SELECT arrayJoin({ids:Array(String)}))'])
    await time(`FINAL, every column, ${cond}`, () =>
      store.client
        .query({
          query: `SELECT * FROM trials FINAL WHERE suite = 'bench' AND dataset_version = 'd1' AND ${cond}`,
          query_params: { ids },
          format: 'JSONEachRow',
        })
        .then((r) => r.json()),
    );
  await time('rowPageFromStore', () => rowPageFromStore(store.client, { ...scope, ...RowQuery.parse({}) }));
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
