import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { EventLog } from '../../processors/ports.ts';
import type { GateBookSnapshot, PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS, type Topic } from '../../schemas/topics.ts';
import { comparison, runOf } from '../helpers/feedbackLoop.ts';
import { kafkaBackend } from '../helpers/processorsHarness.ts';

/**
 * Issue 26, item 6, on Kafka: the gates restore each partition of passk.decisions from its latest snapshot and read
 * it from the snapshot's offset (the one-use reader's group offsets set before it joins). Shown by deleting every
 * record of passk.decisions before those offsets (Kafka's DeleteRecords): a replay from the start would no longer
 * know the comparison decided there, and would decide its re-declaration again; from the snapshot it does not.
 */
const brokers = inject('kafkaBrokers');
const backend = kafkaBackend(brokers, inject('schemaRegistryUrl'));
const disposers: (() => void)[] = [];
afterAll(() => disposers.forEach((d) => d()));

/** A topic's records (from `from`: a partition whose records were all deleted has none to wait for). */
const read = async (log: EventLog, topic: Topic, from?: ReadonlyMap<number, number>): Promise<PasskEvent[]> => {
  const out: PasskEvent[] = [];
  await readToEnd(log, {
    topic,
    groupId: `read-${randomBytes(4).toString('hex')}`,
    ...(from ? { from } : {}),
    onEvent: (e) => void out.push(e),
  });
  return out;
};

describe('gate book snapshots on Kafka', () => {
  it('restore from the snapshot offset: a comparison decided before records deleted stays decided', async () => {
    const env = backend.fresh();
    disposers.push(env.dispose);
    const log = await env.open();
    const config = PasskConfig.parse({ backend: 'embedded', dataDir: env.child.dataDir, gateSnapshotEvery: 1 });
    const drain = async () =>
      (await startProcessors(config, { log, store: false, untilCaughtUp: true, maxWaitMs: 20 })).done;
    const ROWS = ['r1', 'r2', 'r3', 'r4'];
    const declared = comparison('snap-1', 'd1', 'v1', 'v2', { confirmation_attempts: 0, rows: ROWS.length });
    await log.publisher.publish([...runOf('v1', 'd1', ROWS), ...runOf('v2', 'd1', ROWS, { fails: ['r4'] })]);
    await log.publisher.publish([declared]);
    await drain();
    const start = new Map<number, number>(); // set once records are deleted
    const verdicts = async () =>
      (await read(log, TOPICS.decisions, start.size > 0 ? start : undefined)).filter(
        (e) => e.type === 'GateEvaluated' && e.gate_id === 'snap-1',
      );
    expect(await verdicts()).toHaveLength(1);

    // the clean stop snapshotted every partition it folded to its end
    const snapshots = new Map<number, GateBookSnapshot>();
    for (const e of await read(log, TOPICS.rowstate))
      if (e.type === 'GateBookSnapshot' && (snapshots.get(e.partition)?.through_offset ?? -1) < e.through_offset)
        snapshots.set(e.partition, e);
    expect(snapshots.size).toBeGreaterThan(0);
    const decidedIn = [...snapshots.values()].find((s) => s.book.decided?.['snap-1']);
    expect(decidedIn, 'a snapshot holds the decided comparison').toBeDefined();

    // Kafka deletes every record of passk.decisions before each snapshot's offset
    const kafka = new Kafka({
      clientId: 'gate-snapshot-test',
      brokers: brokers.split(','),
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    const topic = `${env.child.namespace}${TOPICS.decisions}`;
    try {
      await admin.fetchTopicMetadata({ topics: [topic] }); // kafkajs deletes only on topics whose metadata it holds
      await admin.deleteTopicRecords({
        topic,
        partitions: [...snapshots.values()].map((s) => ({ partition: s.partition, offset: String(s.through_offset) })),
      });
    } finally {
      await admin.disconnect();
    }
    for (const s of snapshots.values()) start.set(s.partition, s.through_offset);
    expect(await verdicts()).toHaveLength(0);

    // the same comparison declared again (a re-send): the restored book knows it decided, so nothing decides it again
    await log.publisher.publish([{ ...declared, event_id: comparison('snap-1-again', 'd1', 'v1', 'v2').event_id }]);
    await drain();
    expect(await verdicts()).toHaveLength(0);
    await log.close();
  }, 300_000);
});
