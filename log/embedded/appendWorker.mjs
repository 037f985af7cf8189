// The embedded log's writer thread (appendThread.ts): loads the writer module (appendWorker.ts under tsx in a checkout,
// appendWorker.js when built), which opens its own connection to the log and appends what the main thread sends.
import { workerData } from 'node:worker_threads';

if (workerData.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.module);
