/**
 * The serving side of the dashboard bench (bench/dashboard.ts), in a process of its own so that its memory is
 * `passk serve`'s alone (not the store's generation, nor the bare query's answers): opens the store as serve does
 * (`openClickHouse`, the heap bounded as serve bounds it), serves the dashboard over it, and says its port through
 * IPC. Its watermark moves when the parent sends 'move' (answered 'moved'), so a cold request finds nothing kept.
 * Before it serves, one small query reads the columns the bare query reads, as the bench process had before it
 * served in that process (the engine's first read of a table, not the dashboard's, is then out of the first line).
 * 'unbounded' after the path leaves V8's heap growth at its default (serve's before deploy/heap.ts), for an A/B.
 *
 *   fork('bench/dashboardServe.ts', [storePath, 'bounded' | 'unbounded'])
 */
import { boundHeapGrowth } from '../deploy/heap.ts';
import { openClickHouse } from '../sinks/clickhouse/index.ts';
import { serveInProcess } from './dashboardKit.ts';

if (process.argv[3] !== 'unbounded') boundHeapGrowth();
const store = await openClickHouse({ kind: 'embedded', path: process.argv[2]!, database: 'passk' });
await store.client
  .query({
    query:
      "SELECT count(), countIf(passed), uniqExact(row_id, agent_version) FROM trials WHERE suite = 'bench' AND dataset_version = 'd1'",
    format: 'JSONEachRow',
  })
  .then((r) => r.json());
const server = await serveInProcess(store.client);
process.on('message', (m) => {
  if (m === 'move') {
    server.move();
    process.send!('moved');
  } else if (m === 'stop') {
    void server
      .close()
      .then(() => store.close())
      .then(() => process.disconnect());
  }
});
process.send!({ port: server.port });
