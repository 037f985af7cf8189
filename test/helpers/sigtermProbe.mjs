// Preloaded into a passk child by a test (node --import): writes one line to fd 3 when the Nth SIGTERM handler is
// installed (N from SIGTERM_PROBE_NTH, default 1), so the test can signal at a known moment of the start (node itself
// catches SIGTERM, so /proc cannot tell).
import { writeSync } from 'node:fs';

const nth = Number(process.env.SIGTERM_PROBE_NTH ?? '1');
const on = process.on;
let seen = 0;
process.on = process.addListener = function (event, listener) {
  const r = on.call(this, event, listener);
  if (event === 'SIGTERM' && ++seen === nth) writeSync(3, `SIGTERM handler ${nth}\n`);
  return r;
};
