/**
 * The OTLP bench's baseline alone (issue #25): decoding its request bodies, CPU time, best of `rounds`:
 *   node --import tsx bench/profile/otlpDecode.ts [traces=20000] [rounds=5]
 */
import { decodeProtobuf } from '../../producers/otlp/index.ts';
import { otlpBodies } from '../otlp.ts';

const n = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 5);
const bodies = otlpBodies(n, 100);
let best = 0;
for (let r = 0; r < rounds; r++) {
  const t0 = process.cpuUsage();
  for (const b of bodies) decodeProtobuf(b);
  const d = process.cpuUsage(t0);
  best = Math.max(best, n / ((d.user + d.system) / 1e6));
}
console.log(`decodeProtobuf: ${Math.round(best).toLocaleString('en-US')} traces/s (CPU)`);
