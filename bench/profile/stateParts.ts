/**
 * Where the cold overview's and comparison's time goes, query by query, on the dashboard bench's generated store
 * (bench/generatedStore.ts, `rows` rows × 2 versions × 5 attempts, kept in `dir`, /tmp/stateparts-ROWS by default,
 * written by this checkout's schema): the bare `GROUP BY row_id, agent_version`, the row-state counts query and
 * the trials' side of its proof (each alone), the comparison's other queries (must-not-break transitions, run
 * sources, declared runs), and the Node side of `reportFromStore` / `comparisonFromStore` given counts already read.
 * Wall and CPU of the process (chDB runs in it), medians of `samples`.
 *
 *   node --import tsx bench/profile/stateParts.ts 100000 5 [dir]
 */
import { classTransitions } from '../../sinks/clickhouse/queries/compare.ts';
import { declaredRuns } from '../../sinks/clickhouse/queries/declaredRuns.ts';
import {
  countRows,
  STATE_COUNTS_GROUPED_SQL,
  TRIALS_PROOF_SQL,
  TRIALS_PROOF_STORED_SQL,
} from '../../sinks/clickhouse/queries/rowCounts.ts';
import { runSources } from '../../sinks/clickhouse/queries/runSources.ts';
import { comparisonFromStore, reportFromStore } from '../../sinks/clickhouse/queries/storeReport.ts';
import { BARE_GROUP_BY_SQL, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? `/tmp/stateparts-${rows}`;
const store = await openGeneratedStore(dir, rows);
const scope = { suite: 'bench', dataset_version: 'd1' };
const pair = { ...scope, baseline: 'v1', candidate: 'v2' };
const params = { ...scope, versions: [] as string[], ungraded_as_failure: false };
const raw = (query: string) =>
  store.client.query({ query, query_params: params, format: 'JSONCompactEachRow' }).then((r) => r.json());

const proved = await countRows(store.client, scope);
if (proved.from !== 'row_state')
  throw new Error(`the generated store's row state is not proved whole (${proved.from})`);
const all = proved.rows;
const two = (await countRows(store.client, { ...scope, versions: ['v1', 'v2'] })).rows;

const tasks: [string, () => Promise<unknown>][] = [
  ['bare GROUP BY', () => raw(BARE_GROUP_BY_SQL)],
  ['state counts query', () => raw(STATE_COUNTS_GROUPED_SQL)],
  ['trials proof query', () => raw(TRIALS_PROOF_SQL)],
  ['trials proof, stored', () => raw(TRIALS_PROOF_STORED_SQL)],
  ['countRows (both + Node)', () => countRows(store.client, scope)],
  ['declaredRuns', () => declaredRuns(store.client, { suites: ['bench'], datasetVersions: ['d1'] })],
  ['transitions (mnb only)', () => classTransitions(store.client, { ...pair, mustNotBreakOnly: true })],
  ['runSources', () => runSources(store.client, { ...scope, versions: ['v1', 'v2'] })],
  ['overview Node side', () => reportFromStore(store.client, scope, undefined, async () => all)],
  ['compare Node side', () => comparisonFromStore(store.client, pair, undefined, async () => two)],
];
await alternate(tasks, samples);
await store.close();
