/**
 * The dashboard bench's store (rows × 2 versions × 5 attempts, as bench/dashboard.ts) kept in /tmp/dashsplit-ROWS, and
 * the overview's and the comparison's wall times on it: `node --import tsx bench/profile/dashSplit.ts 20000 report,compare`.
 * bench/profile/nodeSide.ts then times their Node side alone on the same store. `pair` and `shared` time the
 * overview then the comparison of one scope, each with its own counts query, and with one shared counts answer
 * (`sharedRowCounts`, a fresh one per sample); wall and CPU time of the process (chDB runs in it).
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { migrate, openClickHouse, trialToRow } from '../../sinks/clickhouse/index.ts';
import { rowCounts } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { comparisonFromStore, reportFromStore, sharedRowCounts } from '../../sinks/clickhouse/queries/storeReport.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { BARE_GROUP_BY_SQL } from '../dashboardKit.ts';

const rows = Number(process.argv[2] ?? 20000);
const dir = `/tmp/dashsplit-${rows}`;
const fresh = !existsSync(dir);
const store = await openClickHouse({ kind: 'embedded', path: dir, database: 'passk' });
const T0 = Date.UTC(2026, 0, 1);
if (fresh) {
  await migrate(store.client);
  for (let r0 = 0; r0 < rows; r0 += 2000) {
    const lines: string[] = [];
    for (let row = r0; row < Math.min(rows, r0 + 2000); row++)
      for (let v = 0; v < 2; v++)
        for (let a = 0; a < 5; a++) {
          const at = T0 + (row * 10 + v * 5 + a);
          lines.push(
            JSON.stringify(
              trialToRow({
                event_id: deterministicEventId(at, 'bench-dashboard', row, v, a),
                type: 'TrialRecorded',
                schema_version: 1,
                occurred_at: at,
                producer: 'p/0',
                suite: 'bench',
                dataset_version: 'd1',
                row_id: `row-${row}`,
                run_id: 'run-1',
                attempt: a,
                agent: { version: ['v1', 'v2'][v]!, model: 'm' },
                input: `request ${row}`,
                output: `answer ${(row * 7 + a + v) % 5}`,
                passed: (row * 2654435761 + a * 40503 + v * 97) % 10 < 7,
                checks: [{ name: 'return_window', answer: (row + a) % 3 === 0 }],
                latency_ms: 100,
              } as never),
            ),
          );
        }
    await store.insertJsonRows('trials', Buffer.from(lines.join('\n') + '\n'));
  }
}
const time = async (name: string, f: () => Promise<unknown>) => {
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const u = process.cpuUsage();
    await f();
    const d = process.cpuUsage(u);
    ms.push(performance.now() - t);
    cpu.push((d.user + d.system) / 1000);
  }
  const show = (xs: number[]) => xs.map((m) => m.toFixed(0)).join(' ');
  console.log(`${name.padEnd(20)} ${show(ms)} ms (cpu ${show(cpu)} ms), load ${loadavg()[0]!.toFixed(1)}`);
};
const scope = { suite: 'bench', dataset_version: 'd1' };
const q = (sql: string) => store.client.query({ query: sql, format: 'JSONCompactEachRow' }).then((r) => r.json());
for (const what of (process.argv[3] ?? 'bare,counts,report,compare').split(',')) {
  if (what === 'bare') await time('bare', () => q(BARE_GROUP_BY_SQL));
  if (what === 'counts') await time('rowCounts', () => rowCounts(store.client, scope));
  if (what === 'report') await time('reportFromStore', () => reportFromStore(store.client, scope));
  if (what === 'compare')
    await time('comparisonFromStore', () =>
      comparisonFromStore(store.client, { ...scope, baseline: 'v1', candidate: 'v2' }),
    );
  if (what === 'pair')
    await time('overview + compare', async () => {
      await reportFromStore(store.client, scope);
      await comparisonFromStore(store.client, { ...scope, baseline: 'v1', candidate: 'v2' });
    });
  if (what === 'shared')
    await time('... sharing counts', async () => {
      const counts = sharedRowCounts(store.client, async () => 'one generation');
      await reportFromStore(store.client, scope, undefined, counts);
      await comparisonFromStore(store.client, { ...scope, baseline: 'v1', candidate: 'v2' }, undefined, counts);
    });
}
await store.close();
