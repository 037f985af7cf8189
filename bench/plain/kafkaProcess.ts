/**
 * The job of `passk process --until-caught-up` on Kafka with its store, in plain code, as its own process: the
 * baseline of the bench's Kafka "passk process with its store" line (bench/processStore.ts).
 *   node --import tsx bench/plain/kafkaProcess.ts <dataDir> <brokers> <namespace>
 * It opens the store (chDB in <dataDir>/store, migrated) as passk does, reads the end offsets of
 * `<namespace>passk.trials` (what "caught up" means), creates its changelog topic, and consumes the trials with one
 * kafkajs group consumer: per fetched batch, `JSON.parse` after the 5-byte registry frame (no validation), the plain
 * fold (bench/plain/fold.ts), the `trials` and `row_state` rows through the store's bulk insert while the changelog
 * is sent as passk sends it (idempotent, acks all, gzip), and the batch's offset committed once both are durable.
 */
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { plainFold } from './fold.ts';

const [dataDir, brokers, namespace] = process.argv.slice(2);
if (!dataDir || !brokers || namespace === undefined)
  throw new Error('usage: kafkaProcess.ts <dataDir> <brokers> <namespace>');
const topic = `${namespace}${TOPICS.trials}`;
const changelogTopic = `${namespace}plain.rowstate`;

const store = await openStore(loadConfig({ dataDir }));
const kafka = new Kafka({ clientId: 'passk-bench-plain', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
const ends = await admin.fetchTopicOffsets(topic);
await admin.createTopics({
  topics: [{ topic: changelogTopic, numPartitions: ends.length, replicationFactor: 1 }],
  waitForLeaders: true,
});
await admin.disconnect();
const total = ends.reduce((n, p) => n + Number(p.high), 0);
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
const consumer = kafka.consumer({ groupId: `${namespace}plain`, maxBytesPerPartition: 4 * 1024 * 1024 });
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });
const { fold, rows } = plainFold();
let seen = 0;
await new Promise<void>((resolve, reject) => {
  if (total === 0) resolve();
  void consumer
    .run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const trials = batch.messages.map((m) => {
          const v = m.value!; // Confluent framing (magic byte, schema id) then the JSON
          return JSON.parse(v.toString('utf8', v[0] === 0 ? 5 : 0)) as TrialRecorded;
        });
        const u = fold(trials);
        await Promise.all([
          store.insertJsonRows('trials', Buffer.from(`${u.trialLines.join('\n')}\n`)),
          u.stateLines.length > 0
            ? store.insertJsonRows('row_state', Buffer.from(`${u.stateLines.join('\n')}\n`))
            : undefined,
          u.changelog.length > 0
            ? producer.send({
                topic: changelogTopic,
                acks: -1,
                compression: CompressionTypes.GZIP,
                messages: u.changelog,
              })
            : undefined,
        ]);
        await consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) },
        ]);
        seen += batch.messages.length;
        if (seen >= total) resolve();
      },
    })
    .catch(reject);
});
await consumer.disconnect();
await producer.disconnect();
await store.close();
process.stdout.write(`${JSON.stringify({ trials: seen, rows: rows() })}\n`);
