import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createKafkaEventLog, createRegistryClient } from '../../log/index.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { interleave } from '../faults/campaign.ts';
import { gateWorkload, workload } from '../helpers/processorsHarness.ts';

/**
 * The fault campaign's misread (docs/reliability.md, fix 8), staged on the shared single-node stack. Three reads to
 * the end at once on one Kafka log, as the campaign's checker makes and as processors' restores do: each asks the
 * log's one kafkajs admin for its topic's offsets, and kafkajs 2.2.4 answers those from its cached metadata, which
 * each new topic refreshes for every topic asked about so far. When a refresh made for fewer topics answers after one
 * made for more — on a cluster, each goes to a random broker — the cache loses the newer topic, `fetchOffsets`
 * answers it with no partitions, and the read of it ended at once with nothing. One broker answers in order, so the
 * slow answer is staged: kafkajs's second metadata request for two topics is answered 300 ms late (a broker that
 * answers late; the request, the answer and everything else are real).
 */
const require = createRequire(import.meta.url);
const Broker = require('kafkajs/src/broker/index.js') as {
  prototype: { metadata: (this: unknown, topics?: string[]) => Promise<unknown> };
};
const original = Broker.prototype.metadata;
let twoTopicAnswers = -1; // -1: not staging
Broker.prototype.metadata = async function (this: unknown, topics: string[] = []) {
  const answer = await original.call(this, topics);
  if (twoTopicAnswers >= 0 && topics.length === 2 && ++twoTopicAnswers === 2)
    await new Promise((r) => setTimeout(r, 300));
  return answer;
};
afterAll(() => void (Broker.prototype.metadata = original));

const topicOf = (e: PasskEvent) =>
  e.type === 'TrialRecorded' ? TOPICS.trials : e.type === 'DatasetRowUpserted' ? TOPICS.datasets : TOPICS.decisions;

/**
 * One round of the stage on a fresh namespace (so a fresh metadata cache for its topics): publishes the workload, then
 * three reads to the end at once. Whether kafkajs makes two refreshes for two topics (the second of which is answered
 * late) depends on how the three reads interleave, which a loaded machine changes: the round says whether it did.
 */
const round = async (): Promise<{ staged: boolean; got: Record<string, number>; want: Record<string, number> }> => {
  const log = await createKafkaEventLog({
    kafka: new Kafka({ brokers: inject('kafkaBrokers').split(','), logLevel: logLevel.NOTHING }),
    registry: createRegistryClient({ url: inject('schemaRegistryUrl') }),
    partitions: 4,
    namespace: `stale-${randomBytes(3).toString('hex')}.`,
  });
  try {
    // the campaign's workload: trials, a gate's dataset rows and its two comparisons on passk.decisions
    const events = interleave(workload(20), gateWorkload(12));
    for (let i = 0; i < events.length; i += 20) await log.publisher.publish(events.slice(i, i + 20));
    const want = new Map<string, number>();
    for (const e of events) want.set(topicOf(e), (want.get(topicOf(e)) ?? 0) + 1);
    expect(want.get(TOPICS.decisions)).toBe(2);

    twoTopicAnswers = 0;
    const got = new Map<string, number>();
    const topics = [TOPICS.trials, TOPICS.datasets, TOPICS.decisions];
    await Promise.all(
      topics.map((topic) =>
        readToEnd(log, {
          topic,
          groupId: `check-${randomBytes(4).toString('hex')}`,
          onEvent: () => void got.set(topic, (got.get(topic) ?? 0) + 1),
        }),
      ),
    );
    return {
      staged: twoTopicAnswers >= 2,
      got: Object.fromEntries(topics.map((t) => [t, got.get(t) ?? 0])),
      want: Object.fromEntries(topics.map((t) => [t, want.get(t) ?? 0])),
    };
  } finally {
    twoTopicAnswers = -1;
    await log.close();
  }
};

describe('reads to the end on a Kafka log whose client metadata goes stale', () => {
  it('three at once read every event of their topics, one metadata answer late', async () => {
    // every round must read everything; rounds go on until one staged the late answer (at most 6)
    const staged: boolean[] = [];
    while (staged.length < 6 && !staged.includes(true)) {
      const r = await round();
      expect(r.got).toEqual(r.want);
      staged.push(r.staged);
    }
    // the stage took place: a second two-topic metadata answer came, late (before the fix, passk.decisions read 0)
    expect(staged).toContain(true);
  }, 180_000);
});
