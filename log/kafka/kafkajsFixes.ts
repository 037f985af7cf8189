/**
 * A fix of kafkajs 2.2.4, applied to its consumer's `Runner` when this module is loaded (log/kafka/consumer.ts
 * imports it). A prototype is shared, so the fix holds whichever module loaded kafkajs first.
 *
 * The bug (the fault campaign's hung processor, seeds 23728618 and 24275029; docs/reliability.md, fix 12): a
 * consumer stopped while its fetch manager replaces its fetchers (a broker left or came back, so the brokers'
 * node ids changed) gets new fetchers after the stop. `FetchManager.start` stops the old ones on
 * `KafkaJSFetcherRebalanceError` and then, with no check of a stop, creates and starts new ones; `Runner.stop`
 * had already set `running = false` and stopped the old ones, so nobody stops the new. Each of them then asks
 * `Runner.fetch` for batches, which answers `[]` at once when the runner is not running, and asks again: a loop of
 * promises that never waits for a timer or I/O, so the process's event loop is held for good (100% CPU, no
 * timers, no SIGTERM handler), and the runner's stop waits for it for ever. The race needs a stop (passk closes its
 * one-use consumers when a read is done) within the moment a fetcher sees the node ids change.
 *
 * The fix: `Runner.fetch` of a runner that is not running fails (non-retriable) instead of answering `[]`. Only such
 * orphaned fetchers can call it then (a stop ends the fetchers it knows of in the same tick as it clears `running`),
 * so the error ends them, the fetch manager's start rejects, and the runner ends as a crashed one, which kafkajs
 * restarts only if passk's consumer still wants it (`restartOnFailure`).
 * log/kafka/kafkajsFixes.int.test.ts stages the race on kafkajs's own Runner and fetch manager
 * (runnerRace.testkit.ts): without the fix it holds the event loop, with it every stop returns.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface RunnerPrototype {
  running: boolean;
  fetch(nodeId: number): Promise<unknown[]>;
}
const Runner = require('kafkajs/src/consumer/runner.js') as { prototype: RunnerPrototype & { passkFixed?: true } };
const { KafkaJSNonRetriableError } = require('kafkajs/src/errors.js') as {
  KafkaJSNonRetriableError: new (message: string) => Error;
};

if (!Runner.prototype.passkFixed) {
  const fetch = Runner.prototype.fetch;
  Runner.prototype.fetch = async function (this: RunnerPrototype, nodeId: number) {
    if (!this.running)
      throw new KafkaJSNonRetriableError('a fetcher of a stopped consumer (kafkajs 2.2.4: started after the stop)');
    return fetch.call(this, nodeId);
  };
  Runner.prototype.passkFixed = true;
}

export const KAFKAJS_RUNNER_FIXED = true;
