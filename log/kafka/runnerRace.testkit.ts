/**
 * Stages kafkajs 2.2.4's stop-during-rebalance race on its own `Runner` and fetch manager, with a stand-in consumer
 * group (no broker): brokers' node ids change, and the runner is stopped a few ms later, at eleven offsets, three times over. Prints
 * `ok` once every stop has returned and timers still run. Without the fix of kafkajsFixes.ts (`applyKafkajsFixes`) the process's event
 * loop is held instead (nothing is printed). `node --import tsx log/kafka/runnerRace.testkit.ts [fixed|unfixed]`
 */
import { createRequire } from 'node:module';

if (process.argv[2] === 'fixed') (await import('./kafkajsFixes.ts')).applyKafkajsFixes();
const require = createRequire(import.meta.url);
type RunnerLike = { start(): Promise<void>; stop(): Promise<void> };
const Runner = require('kafkajs/src/consumer/runner.js') as new (o: object) => RunnerLike;

const logger = { namespace: () => logger, debug() {}, info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const trial = async (delayMs: number): Promise<void> => {
  let nodes = [1, 2, 3];
  const group = {
    groupId: 'g',
    memberId: 'm',
    connect: async () => {},
    joinAndSync: async () => {},
    leave: async () => {},
    heartbeat: async () => {},
    getNodeIds: () => nodes,
    // a fetch's I/O, of a different length per broker
    fetch: async (nodeId: number) => (await sleep(2 + nodeId * 3), []),
  };
  const runner = new Runner({
    logger,
    consumerGroup: group,
    instrumentationEmitter: { emit() {} },
    eachBatch: async () => {},
    heartbeatInterval: 3_000,
    retry: { retries: 0 },
    onCrash: () => {},
    concurrency: 1,
  });
  await runner.start();
  await sleep(30);
  nodes = [2, 3]; // a broker left: the next fetch of each fetcher sees it and the fetchers are replaced
  await sleep(delayMs);
  await Promise.race([runner.stop(), sleep(2_000)]);
  await sleep(20); // a held event loop never gets here
};

// three sweeps: on a loaded machine (CI, load 15+) timers fire late and one sweep of the eleven offsets once missed
// the race window in every trial (the canary then printed ok on unfixed kafkajs)
for (let sweep = 0; sweep < 3; sweep++) for (let d = 0; d <= 10; d++) await trial(d);
process.stdout.write('ok\n');
process.exit(0);
