/**
 * The comparison's Node side alone (`comparisonFromStore` given counts already read), and the overview's, on the
 * dashboard bench's generated store (bench/generatedStore.ts, `rows` rows × 2 versions × 5 attempts, kept in `dir`):
 * CPU per call, medians of `samples`; the answers written to `out` (JSON) so two checkouts' can be compared byte
 * for byte.
 *
 *   node --import tsx bench/profile/compareNode.ts 100000 5 [dir] [out]
 */
import { writeFileSync } from 'node:fs';
import { countRows } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { comparisonFromStore, reportFromStore } from '../../sinks/clickhouse/queries/storeReport.ts';
import { openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? `/tmp/stateparts-${rows}`;
const out = process.argv[5];
const store = await openGeneratedStore(dir, rows);
const scope = { suite: 'bench', dataset_version: 'd1' };
const pair = { ...scope, baseline: 'v1', candidate: 'v2' };
const proved = await countRows(store.client, scope);
if (proved.from !== 'row_state')
  throw new Error(`the generated store's row state is not proved whole (${proved.from})`);
const all = proved.rows;
const two = (await countRows(store.client, { ...scope, versions: ['v1', 'v2'] })).rows;
const compare = () => comparisonFromStore(store.client, pair, undefined, async () => two);
const overview = () => reportFromStore(store.client, scope, undefined, async () => all);
if (out) writeFileSync(out, JSON.stringify({ compare: await compare(), overview: await overview() }));
await alternate(
  [
    ['SELECT 1 (a floor)', () => store.client.query({ query: 'SELECT 1' }).then((r) => r.text())],
    ['compare Node side', compare],
    ['overview Node side', overview],
  ],
  samples,
);
await store.close();
