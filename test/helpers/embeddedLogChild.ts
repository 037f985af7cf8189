/**
 * A child process for the embedded log's crash and multi-process tests (test/integration/embeddedLogProcesses.int.test.ts).
 *   node --import tsx embeddedLogChild.ts <dataDir> <ackFile> <producer> <events | "forever"> [consume]
 * Publishes TrialRecorded events in batches of 10; after each publish resolves it appends
 * `A <event_id>` lines to ackFile. With `consume`, a consumer in group `crash` reads and commits,
 * appending `C <partition> <nextOffset>` after each commit resolves. Exits when done, or never.
 */
import { appendFileSync } from 'node:fs';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { trial } from './events.ts';

const [dataDir, ackFile, producer, count, consume] = process.argv.slice(2);
if (!dataDir || !ackFile || !producer || !count)
  throw new Error('usage: embeddedLogChild.ts <dataDir> <ackFile> <producer> <events|forever> [consume]');
const total = count === 'forever' ? Infinity : Number(count);

const log = createEmbeddedEventLog({ dataDir, consumer: { pollMs: 5, heartbeatMs: 100, sessionMs: 60_000 } });

const publishLoop = async () => {
  for (let seq = 0; seq < total;) {
    const batch = Array.from({ length: Math.min(10, total - seq) }, (_, i) =>
      trial({
        seq: seq + i,
        event_id: deterministicEventId(1_700_000_000_000 + seq + i, producer, seq + i),
        row_id: `row-${(seq + i) % 16}`,
        run_id: producer,
        producer: `child/${producer}`,
      }),
    );
    await log.publisher.publish(batch);
    appendFileSync(ackFile, batch.map((e) => `A ${e.event_id}\n`).join(''));
    seq += batch.length;
    await new Promise((r) => setImmediate(r));
  }
};

const consumeLoop = async () => {
  const consumer = await log.consumer({ groupId: 'crash', topics: [TOPICS.trials], maxBatch: 25 });
  for await (const b of consumer.batches()) {
    await consumer.commit([{ topic: b.topic, partition: b.partition, nextOffset: b.lastOffset + 1 }]);
    appendFileSync(ackFile, `C ${b.partition} ${b.lastOffset + 1}\n`);
  }
};

process.stdout.write('started\n');
await Promise.all([publishLoop(), consume ? consumeLoop() : Promise.resolve()]);
await log.close();
