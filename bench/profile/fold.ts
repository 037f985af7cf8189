/**
 * The fold bench's topology line alone, for a profile or an instruction count (issue #14,
 * docs/performance.md): the trial topology over in-memory batches (no I/O), `runs` times:
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/fold.ts [events=200000] [runs=3] [order=attempt|row]
 * `row`: each row's attempts one after another (a run of k attempts per row), so a unit changes each row
 * several times; `attempt` (the bench's): attempt-major, so most rows change once per unit.
 *   valgrind --tool=callgrind node --import tsx bench/profile/fold.ts 50000 1
 */
import { batchesOf, memorySource, runTopology, syntheticTrials } from '../processors.ts';

const n = Number(process.argv[2] ?? 200_000);
const runs = Number(process.argv[3] ?? 3);
const order = process.argv[4] ?? 'attempt';
const events = [...syntheticTrials({ events: n, rows: 5_000, versions: 4 })];
if (order === 'row')
  events.sort((a, b) => cmp(a.agent.version, b.agent.version) || cmp(a.row_id, b.row_id) || a.attempt - b.attempt);
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
const batches = batchesOf(events);
for (let r = 0; r < runs; r++) {
  const t = process.cpuUsage();
  const folded = await runTopology(
    memorySource(async function* () {
      yield* batches;
    }),
  );
  const d = process.cpuUsage(t);
  console.log(
    `run ${r + 1}: ${folded} trials, ${Math.round(n / ((d.user + d.system) / 1e6)).toLocaleString('en-US')} ev/s (CPU)`,
  );
}
