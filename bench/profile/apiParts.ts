/**
 * The queries a cold `/api/overview` and `/api/compare` ask, each alone (wall and CPU of the process, chDB in it;
 * medians of `samples`, alternating, against the bare `GROUP BY row_id, agent_version`), on a kept generated store.
 *
 *   node --import tsx bench/profile/apiParts.ts 100000 5 [dir]
 */
import { classTransitions } from '../../sinks/clickhouse/queries/compare.ts';
import { declaredRuns } from '../../sinks/clickhouse/queries/declaredRuns.ts';
import { countRows, fingerprintsStored } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { runSources } from '../../sinks/clickhouse/queries/runSources.ts';
import { select } from '../../sinks/clickhouse/queries/select.ts';
import { NOT_RETRACTED } from '../../sinks/clickhouse/queries/retracted.ts';
import { z } from 'zod';
import { bareGroupBy, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? `/tmp/stateparts-${rows}`;
const store = await openGeneratedStore(dir, rows);
const c = store.client;
const scope = { suite: 'bench', dataset_version: 'd1' };
const pair = { ...scope, baseline: 'v1', candidate: 'v2' };
await alternate(
  [
    ['bare GROUP BY', () => bareGroupBy(c)],
    ['countRows (all)', () => countRows(c, scope)],
    ['countRows (v1, v2)', () => countRows(c, { ...scope, versions: ['v1', 'v2'] })],
    ['fingerprintsStored', () => fingerprintsStored(c)],
    ['declaredRuns', () => declaredRuns(c, { suites: ['bench'], datasetVersions: ['d1'] })],
    [
      'adaptiveVersions',
      () =>
        select(
          c,
          z.object({ agent_version: z.string() }),
          `SELECT DISTINCT agent_version FROM trials WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
         AND (empty({versions:Array(String)}) OR has({versions:Array(String)}, agent_version))
         AND startsWith(lower(run_id), 'adaptive-') AND ${NOT_RETRACTED}`,
          { ...scope, versions: [] },
        ),
    ],
    ['classTransitions (mnb)', () => classTransitions(c, { ...pair, mustNotBreakOnly: true })],
    ['runSources', () => runSources(c, { ...scope, versions: ['v1', 'v2'] })],
  ],
  samples,
);
await store.close();
