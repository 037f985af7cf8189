/**
 * The restart's restore (bench/restore.ts) on a log seeded once, to profile: `node --import tsx [--cpu-prof]
 * bench/profile/restore.ts DIR ROWS MODE [N]`, MODE passk | baseline (JSON.parse into a Map); seeds
 * DIR/log.sqlite when it is missing. Prints wall and CPU seconds of each pass and the load average.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { parseChangelog, restoreAsPasskDoes, seedChangelog } from '../restore.ts';

const [dir = '/tmp/passk-profile-restore', rows = '1000000', mode = 'passk', passes = '1'] = process.argv.slice(2);
const seeded = existsSync(join(dir, 'log.sqlite'));
const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
if (!seeded) await seedChangelog(log, Number(rows));
const db = new Database(join(dir, 'log.sqlite'), { readonly: true });
const baseline = parseChangelog(db);
for (let i = 0; i < Number(passes); i++) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const n = mode === 'baseline' ? baseline() : (await restoreAsPasskDoes(log, `${process.pid}-${i}`)).rows;
  const used = process.cpuUsage(cpu);
  const wall = (performance.now() - t) / 1000;
  const load = loadavg()[0]!.toFixed(1);
  console.log(
    `${mode}: ${n} rows, ${wall.toFixed(2)} s wall, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU, load ${load}`,
  );
}
db.close();
await log.close();
