import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKafkaEventLog, createRegistryClient } from '../../log/index.ts';
import type { EventLog } from '../../processors/ports.ts';
import { importFiles } from '../../producers/importers/importFiles.ts';
import { readLog } from '../../producers/logReader.ts';
import { recordedAttempts } from '../../producers/runner/resume.ts';
import { createRecorder, newRunId } from '../../producers/sdk/index.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { ALL_TOPICS, TOPICS } from '../../schemas/topics.ts';
import { toolOutput } from '../helpers/fixtures.ts';

/** The producers on the distributed backend: the same code path as the embedded log. */
const brokers = inject('kafkaBrokers').split(',');
const namespace = `p${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;
const kafka = new Kafka({ clientId: 'passk-producers-test', brokers, logLevel: logLevel.NOTHING });
let log: EventLog;

beforeAll(async () => {
  const registry = createRegistryClient({ url: inject('schemaRegistryUrl') });
  log = await createKafkaEventLog({ kafka, registry, namespace, partitions: 3 });
});
afterAll(async () => {
  await log?.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: ALL_TOPICS.map((t) => namespace + t) }).catch(() => {});
  await admin.disconnect();
});

const trials = async (): Promise<PasskEvent[]> => {
  const out: PasskEvent[] = [];
  await readLog(log, { topics: [TOPICS.trials] }, (e) => out.push(e.event));
  return out;
};

describe('producers on Kafka + schema registry', () => {
  it('the SDK publishes through the registry codec, and a resumed run sees what it recorded', async () => {
    const recorder = createRecorder({
      publisher: log.publisher,
      retry: { retries: 3, initialMs: 100, factor: 2, maxMs: 1_000 },
    });
    const run_id = newRunId();
    for (let i = 0; i < 30; i++)
      void recorder.recordTrial({
        suite: 'refunds',
        dataset_version: 'v1',
        row_id: `r${i % 10}`,
        run_id,
        attempt: Math.floor(i / 10),
        agent: { version: 'p2' },
        passed: i % 4 !== 0,
        checks: [{ name: 'window', answer: true }],
      });
    await recorder.markRunFinished({ run_id, k: 3 });
    await recorder.close();
    const events = await trials();
    expect(events.filter((e) => e.type === 'TrialRecorded')).toHaveLength(30);
    expect(events.find((e) => e.type === 'RunFinished')).toMatchObject({ trials: 30, rows: 10, k: 3 });
    const recorded = await recordedAttempts(log, {
      suite: 'refunds',
      dataset_version: 'v1',
      run_id,
      agent: { version: 'p2' },
    });
    expect(recorded.size).toBe(30);
  });

  it('importing a file twice records nothing new', async () => {
    const file = toolOutput('tau2-grok-4-airline-4trials.json');
    const first = await importFiles([file], {}, { publisher: log.publisher, source: log });
    const second = await importFiles([file], {}, { publisher: log.publisher, source: log });
    expect(first[0]).toMatchObject({ trials: 16, published: 17, skipped: 0 });
    expect(second[0]).toMatchObject({ trials: 16, published: 0, skipped: 16 });
    expect((await trials()).filter((e) => e.type === 'TrialRecorded' && e.suite === 'airline')).toHaveLength(16);
  });
});
