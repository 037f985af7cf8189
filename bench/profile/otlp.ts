/**
 * The OTLP bench's receiver line alone, for a profile (issue #25, docs/performance.md):
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/otlp.ts [traces=20000] [rounds=2]
 *   node --import tsx bench/profile/top.ts /tmp/prof/<the larger file>.cpuprofile
 */
import { benchOtlp } from '../otlp.ts';

const l = await benchOtlp({
  n: Number(process.argv[2] ?? 20_000),
  rounds: Number(process.argv[3] ?? 2),
  log: console.log,
});
console.log(
  `${Math.round(l.tracesPerSec)} traces/s against ${Math.round(l.baselinePerSec)}/s decode-only: ${l.ratio.toFixed(2)}×`,
);
