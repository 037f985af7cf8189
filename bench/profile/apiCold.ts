/**
 * The dashboard's cold `/api/overview` and `/api/compare` through `passk serve`'s server (in this process) over a
 * kept generated store (bench/generatedStore.ts, `rows` rows × 2 versions × 5 attempts in `dir`), the store's
 * watermark moved before each request as bench/dashboard.ts does: wall and CPU of the process per request (chDB
 * runs in it; medians of `samples`, alternating with the bare `GROUP BY row_id, agent_version`), and each answer's
 * body written to `out` (`out`.overview.json, `out`.compare.json) so two checkouts' can be compared byte for byte.
 * Run it under `node --cpu-prof` to profile the server side.
 *
 *   node --import tsx bench/profile/apiCold.ts 100000 5 [dir] [out]
 */
import { writeFileSync } from 'node:fs';
import { bareGroupBy, getText, openGeneratedStore, SCOPE, serveInProcess } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';

const rows = Number(process.argv[2] ?? 100_000);
const samples = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? `/tmp/stateparts-${rows}`;
const out = process.argv[5];
const store = await openGeneratedStore(dir, rows);
const server = await serveInProcess(store.client);

const overview = `/api/overview?${SCOPE}`;
const compare = `/api/compare?${SCOPE}&baseline=v1&candidate=v2`;
const cold = (path: string) => () => {
  server.move();
  return getText(server.port, path);
};
if (out) {
  writeFileSync(`${out}.overview.json`, await cold(overview)());
  writeFileSync(`${out}.compare.json`, await cold(compare)());
}
const bare = () => bareGroupBy(store.client);
await alternate(
  [
    ['bare GROUP BY', bare],
    ['cold /api/overview', cold(overview)],
    ['cold /api/compare', cold(compare)],
  ],
  samples,
);
await server.close();
await store.close();
