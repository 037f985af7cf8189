/**
 * kafkajs 2.2.4 (its last release, February 2023) and the six of its bugs the fault campaign met
 * (docs/reliability.md, fixes 4, 6, 8, 11, 12 and 13). Five are worked around in passk's own calls to kafkajs, where
 * the bug bites; one, the Runner race, can only be fixed inside kafkajs, and is: `applyKafkajsFixes()` patches
 * kafkajs's `Runner.prototype.fetch`. The Kafka backend calls it when it creates its clients
 * (`createKafkaEventLog`), never an import: `import { createRecorder } from 'passk'`, or the embedded backend,
 * leaves kafkajs as it is (test/integration/kafkajsUntouched.int.test.ts). A prototype is shared, so once a Kafka
 * event log is opened the fix holds for every kafkajs consumer of the process, the host application's too (it makes
 * a stopped runner's orphaned fetcher fail instead of spinning; a running one is not affected).
 *
 * Each bug has a canary (log/kafka/kafkajsCanaries.unit.test.ts, log/kafka/kafkajsFixes.int.test.ts): a test that
 * stages the bug on kafkajs's own code, or pins what passk depends on, and passes while kafkajs still has it. When
 * an upgrade fixes one, its canary fails: remove the workaround then. docs/event-log.md says what a move to a
 * maintained client would take.
 */
import { createRequire } from 'node:module';

export interface KafkajsBug {
  /** The fault campaign's fix (docs/reliability.md). */
  readonly fix: number;
  readonly bug: string;
  /** The upstream issue or pull request of this very bug, or null when none was found (then it is unreported). */
  readonly upstream: string | null;
  /**
   * Upstream issues and pull requests about the same code or symptom, which are not this bug's report (searched in
   * tulios/kafkajs's issues, December 2026): where to report it, or to look for a fix.
   */
  readonly related: readonly string[];
  /** Where passk works around it. */
  readonly workaround: string;
  /** The test that fails once kafkajs no longer has the bug. */
  readonly canary: string;
}

export const KAFKAJS_BUGS: readonly KafkajsBug[] = [
  {
    fix: 4,
    bug:
      'sendBatch to partitions on several brokers retries only the brokers without an answer: records of a partition ' +
      'whose leadership moved to a broker that had answered are never sent, and the call resolves (acknowledged loss)',
    upstream:
      'https://github.com/tulios/kafkajs/issues/1303 (fix: https://github.com/tulios/kafkajs/pull/1798, unmerged)',
    related: [],
    workaround: 'log/kafka/publisher.ts: one sendBatch per topic-partition',
    canary: 'log/kafka/kafkajsCanaries.unit.test.ts: "sendMessages forgets a partition whose leader moved"',
  },
  {
    fix: 6,
    bug: 'a producer.connect() that fails after the seed broker connected leaves that connection open',
    upstream: null,
    // a producer that keeps retrying its connection after disconnect() (open)
    related: ['https://github.com/tulios/kafkajs/issues/1174'],
    workaround: 'log/kafka/publisher.ts: a producer whose connect failed is disconnected',
    canary: 'log/kafka/kafkajsCanaries.unit.test.ts: "kafkajs is still 2.2.4"',
  },
  {
    fix: 8,
    bug:
      'the admin answers offsets reads from cached metadata that concurrent refreshes can lose a topic from: ' +
      'fetchOffsets then answers that topic with no partitions, silently',
    upstream: null,
    // the cluster's targetTopics and refreshes that overwrite metadata: #651 (open), its fix #667 (unmerged), #1759
    related: [
      'https://github.com/tulios/kafkajs/issues/651',
      'https://github.com/tulios/kafkajs/pull/667',
      'https://github.com/tulios/kafkajs/issues/1759',
    ],
    workaround:
      'log/kafka/consumer.ts: an offsets read must cover every partition the topic had; a short one is read again',
    canary: 'log/kafka/kafkajsCanaries.unit.test.ts: "kafkajs is still 2.2.4"',
  },
  {
    fix: 11,
    bug: 'while kafkajs restarts a crashed consumer it refuses a commit with an untyped "not initialized" error',
    upstream: null,
    // the same refusal ("Consumer group was not initialized, consumer#run must be called first") met outside a run
    related: ['https://github.com/tulios/kafkajs/issues/1294'],
    workaround: 'log/kafka/consumer.ts: that refusal, before the close, is a fenced commit (CommitRejected)',
    canary: 'log/kafka/kafkajsCanaries.unit.test.ts: "a commit outside a run is refused with the message passk reads"',
  },
  {
    fix: 12,
    bug:
      'a consumer stopped while its fetch manager replaces its fetchers gets new fetchers after the stop, which ' +
      "spin on the stopped runner's fetch and hold the event loop for good",
    upstream: null,
    // the same spin of the fetch manager with no delay when no broker is left (#1384, fixed by #1402 in 2.1.0), and a
    // stop right after run() that holds the process (#967, open)
    related: [
      'https://github.com/tulios/kafkajs/issues/1384',
      'https://github.com/tulios/kafkajs/pull/1402',
      'https://github.com/tulios/kafkajs/issues/967',
    ],
    workaround: 'log/kafka/kafkajsFixes.ts: applyKafkajsFixes() (Runner.prototype.fetch of a stopped runner fails)',
    canary: 'log/kafka/kafkajsFixes.int.test.ts: "kafkajs 2.2.4 as shipped holds the event loop for good"',
  },
  {
    fix: 13,
    bug:
      'admin.fetchTopicOffsets gives up on a leadership error (the leader it cached died or moved) without refreshing ' +
      'its metadata, which it refreshes only at 5 minutes of age: read again on the same admin, it asks the old leader',
    upstream: null,
    // a forced metadata refresh, proposed for the admin's topic metadata (#374, closed unmerged); the admin's cached
    // metadata under its offsets reads (#1759). Kafka's Java client fixed the same in its ListOffsets (KAFKA-9535).
    related: ['https://github.com/tulios/kafkajs/pull/374', 'https://github.com/tulios/kafkajs/issues/1759'],
    workaround: 'log/kafka/offsets.ts: after a leadership error, the end offsets are read through a new admin',
    canary:
      'log/kafka/kafkajsCanaries.unit.test.ts: "admin.fetchTopicOffsets gives up on a leader that moved without ' +
      'refreshing its metadata (fix 13)"',
  },
];

const require = createRequire(import.meta.url);

interface RunnerPrototype {
  running: boolean;
  fetch(nodeId: number): Promise<unknown[]>;
}

/** kafkajs's consumer Runner, whose prototype the fix patches (exported for the tests that check it is untouched). */
export const kafkajsRunner = (): { prototype: RunnerPrototype & { passkFixed?: true } } =>
  require('kafkajs/src/consumer/runner.js') as { prototype: RunnerPrototype & { passkFixed?: true } };

/**
 * Fix 12 (docs/reliability.md): a consumer stopped while its fetch manager replaces its fetchers (a broker left or
 * came back, so the brokers' node ids changed) gets new fetchers after the stop. `FetchManager.start` stops the old
 * ones on `KafkaJSFetcherRebalanceError` and then, with no check of a stop, creates and starts new ones;
 * `Runner.stop` had already set `running = false` and stopped the old ones, so nobody stops the new. Each of them
 * then asks `Runner.fetch` for batches, which answers `[]` at once when the runner is not running, and asks again: a
 * loop of promises that never waits for a timer or I/O, so the process's event loop is held for good.
 *
 * The fix: `Runner.fetch` of a runner that is not running fails (non-retriable) instead of answering `[]`. Only such
 * orphaned fetchers can call it then (a stop ends the fetchers it knows of in the same tick as it clears `running`),
 * so the error ends them, the fetch manager's start rejects, and the runner ends as a crashed one, which kafkajs
 * restarts only if the consumer still wants it (`restartOnFailure`). Applying it twice changes nothing.
 */
export const applyKafkajsFixes = (): void => {
  const Runner = kafkajsRunner();
  if (Runner.prototype.passkFixed) return;
  const { KafkaJSNonRetriableError } = require('kafkajs/src/errors.js') as {
    KafkaJSNonRetriableError: new (message: string) => Error;
  };
  const fetch = Runner.prototype.fetch;
  Runner.prototype.fetch = async function (this: RunnerPrototype, nodeId: number) {
    if (!this.running)
      throw new KafkaJSNonRetriableError('a fetcher of a stopped consumer (kafkajs 2.2.4: started after the stop)');
    return fetch.call(this, nodeId);
  };
  Runner.prototype.passkFixed = true;
};
