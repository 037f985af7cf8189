/**
 * Seeds an embedded data directory with synthetic trials for a profile of `passk process`:
 *   node --import tsx bench/profile/seed.ts <dataDir> [trials=100000] [rows=10000]
 * then: node --cpu-prof --cpu-prof-dir=<dir> bin/passk.mjs process --until-caught-up --data-dir <dataDir>
 * and: node --import tsx bench/profile/top.ts <dir>/*.cpuprofile   (docs/performance.md)
 */
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { syntheticTrials } from '../processors.ts';

const [dataDir, trials = '100000', rows = '10000'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: seed.ts <dataDir> [trials] [rows]');
const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL' });
const all = [...syntheticTrials({ events: Number(trials), rows: Number(rows), versions: 4 })];
for (let i = 0; i < all.length; i += 5_000) await log.publisher.publish(all.slice(i, i + 5_000));
await log.close();
process.stderr.write(`seeded ${all.length} trials into ${dataDir}\n`);
