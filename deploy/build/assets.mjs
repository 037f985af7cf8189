// The files the code reads at run time besides its modules (the dashboard's web assets, the OTLP receiver's .proto
// files, the worker threads' entry modules, the demo's dataset), copied beside the compiled modules by `npm run build`
// (deploy/build/build.mjs) and by the test runs' build of the CLI (deploy/test/cliBuild.mjs).
export const ASSETS = [
  'web/client',
  'producers/otlp/proto',
  'producers/runner/agents/moduleWorker.mjs',
  'log/embedded/appendWorker.mjs',
  'demo/dataset/refund-review.jsonl',
];
