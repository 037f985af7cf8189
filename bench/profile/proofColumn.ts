/**
 * The trials' side of the row-state proof computed in the query (`TRIALS_PROOF_SQL`) against the same sum read from
 * the fingerprint column (migration 19, `TRIALS_PROOF_STORED_SQL`; added if missing and written into every part
 * here, on the store in `dir`: use a copy of one from before migration 19), and the bare `GROUP BY row_id,
 * agent_version`. CPU of the process (chDB runs in it), medians of `samples`.
 *
 *   node --import tsx bench/profile/proofColumn.ts DIR [samples]
 */
import { TRIALS_PROOF_SQL, TRIALS_PROOF_STORED_SQL } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { STORED_TRIAL_FINGERPRINT } from '../../sinks/clickhouse/schema/countsColumns.ts';
import { BARE_GROUP_BY_SQL, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const dir = process.argv[2]!;
const samples = Number(process.argv[3] ?? 5);
const store = await openGeneratedStore(dir);
const params = { suite: 'bench', dataset_version: 'd1', versions: [] as string[], ungraded_as_failure: false };
const raw = async (query: string) =>
  (await store.client.query({ query, query_params: params, format: 'JSONCompactEachRow' })).json();
await store.client.command({
  query: `ALTER TABLE trials ADD COLUMN IF NOT EXISTS fingerprint UInt64 MATERIALIZED ${STORED_TRIAL_FINGERPRINT}`,
});
const t = Date.now();
await store.client.command({
  query: 'ALTER TABLE trials MATERIALIZE COLUMN fingerprint',
  clickhouse_settings: { mutations_sync: '2' },
});
console.log(`materialized in ${Date.now() - t} ms`);
const fromColumn = TRIALS_PROOF_STORED_SQL;
const [a, b] = [await raw(TRIALS_PROOF_SQL), await raw(fromColumn)];
if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`answers differ: ${JSON.stringify([a, b])}`);
await alternate(
  [
    ['bare GROUP BY', () => raw(BARE_GROUP_BY_SQL)],
    ['proof, computed', () => raw(TRIALS_PROOF_SQL)],
    ['proof, column', () => raw(fromColumn)],
  ],
  samples,
);
await store.close();
