import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { fakeAdmin, standInSource } from '../../log/kafka/kafkajsStandIn.testkit.ts';
import { createInFlight } from '../../processors/operators/inFlight.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import { tailTopic } from '../../processors/operators/tailTopic.ts';
import { BackendUnavailable } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';

/**
 * A stop (SIGTERM) while the processors start, over the Kafka consumer with a kafkajs stand-in (the log's admin and
 * consumers as log/kafka/consumer.unit.test.ts has them): a one-use reader's lag read, waiting out a broker that
 * refuses connections, must end with the stop, not fail the processors as a backend away. A real broker cannot stage
 * it: the single-node stack has no second broker to take the leadership, and the refusal must come after the reader
 * opened.
 */
describe('a stop while a one-use reader waits out a broker away (the gates starting: fault campaign, seed 23237640)', () => {
  /**
   * The log's admin while broker 3, the leader of the topic's partitions, refuses connections: every end-offsets read
   * fails as kafkajs fails it. The stop (SIGTERM) comes while the first of them is in flight.
   */
  const refusing = () => {
    const admin = fakeAdmin(0);
    let requestStop!: () => void;
    const stop = new Promise<void>((resolve) => (requestStop = resolve));
    let tries = 0;
    admin.fetchTopicOffsets = async () => {
      tries++;
      requestStop();
      throw new kafkajs.KafkaJSConnectionError('Connection error: connect ECONNREFUSED 10.77.43.13:9092');
    };
    return { source: standInSource(admin), stop, tries: () => tries };
  };

  it('a restore read to the end ends with nothing read, not with the broker’s error (exit 0, not 3)', async () => {
    const { source, stop, tries } = refusing();
    const read = await readToEnd(source, {
      topic: TOPICS.decisions,
      groupId: 'passk-gates.restore.i',
      stop,
      onEvent: () => {},
    });
    expect(read).toBe(0);
    // the stop closed the reader: its lag read was not tried again (it was, through all its retries, before)
    expect(tries()).toBe(1);
  });

  it('a tail that starts (the gates’ global tables) ends with nothing delivered, never loaded', async () => {
    const { source, stop, tries } = refusing();
    const tail = await tailTopic(source, {
      topic: TOPICS.datasets,
      groupId: 'passk-gates.passk.datasets.i',
      inFlight: createInFlight(10),
      stop,
    });
    const delivered: unknown[] = [];
    await new Promise<void>((complete) => tail.batches$.subscribe({ next: (b) => delivered.push(b), complete }));
    expect(delivered).toEqual([]);
    expect(await tail.caughtUp()).toBe(false);
    expect(tries()).toBe(1);
  });

  it('without a stop, the same refusals still fail the read after its retries (a backend away: exit 3)', async () => {
    const { source, tries } = refusing();
    const read = readToEnd(source, { topic: TOPICS.decisions, groupId: 'passk-gates.restore.i', onEvent: () => {} });
    await expect(read).rejects.toBeInstanceOf(BackendUnavailable);
    expect(tries()).toBe(7);
  });
});
