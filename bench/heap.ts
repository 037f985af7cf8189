import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc`, exposed at run time (the benches run without `--expose-gc`). */
setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

/** The retained heap after a full collection (twice: the first can leave garbage that finalizers free). */
export const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
