import { afterAll, describe, expect, inject, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { openStore } from '../../deploy/store.ts';
import { validateEvent } from '../../schemas/codec.ts';
import { TOPICS, keyOf } from '../../schemas/topics.ts';
import type { EventLog } from '../../processors/ports.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { embeddedBackend, kafkaBackend, type ProcessorsBackend } from '../helpers/processorsHarness.ts';

const backends: ProcessorsBackend[] = [
  embeddedBackend,
  kafkaBackend(inject('kafkaBrokers'), inject('schemaRegistryUrl')),
];

/** The config the processors of `child` run with (their store lives in its data directory). */
const configOf = (child: ReturnType<ProcessorsBackend['fresh']>['child']) =>
  PasskConfig.parse({
    backend: child.backend,
    dataDir: child.dataDir,
    ...(child.brokers && child.registry
      ? { kafka: { brokers: child.brokers.split(','), schemaRegistryUrl: child.registry, partitions: 4 } }
      : {}),
  });

/** Bad records as the log holds them: garbage, a lone surrogate, a schema violation (the last two well framed). */
const poisonFor = async (log: EventLog) => {
  const good = trial({ row: 'p', version: 'v1', attempt: 0, passed: true });
  const valid = await log.codec.encode(good);
  const frame = valid.subarray(0, valid.length - JSON.stringify(validateEvent(good)).length);
  const framed = (json: string) => new Uint8Array([...frame, ...new TextEncoder().encode(json)]);
  return [
    new Uint8Array([0xff, 0xfe, 0x00, 0x01]),
    framed(JSON.stringify(trial({ row: 'lone\ud800', version: 'v1', attempt: 0, passed: true }))),
    framed(JSON.stringify({ ...trial({ row: 'neg', version: 'v1', attempt: 0, passed: true }), attempt: -1 })),
  ];
};

describe.each(backends)('poison records in the processors ($name)', (backend) => {
  const cleanups: (() => void)[] = [];
  afterAll(() => cleanups.forEach((c) => c()));

  it('dead-letters each bad record once, in the log and in the store, across a restart, and counts the rest once', async () => {
    const env = backend.fresh();
    cleanups.push(env.dispose);
    const config = configOf(env.child);
    const log = await env.open();
    try {
      const good = ['r1', 'r2'].flatMap((row) =>
        [0, 1, 2].map((attempt) => trial({ row, version: 'v1', attempt, passed: attempt !== 1 })),
      );
      const key = keyOf(good[0]!);
      const poison = await poisonFor(log);
      await log.publisher.publish(good.slice(0, 3));
      await log.publisher.publishRaw(
        TOPICS.trials,
        poison.map((value) => ({ key, value })),
      );
      await log.publisher.publish(good.slice(3));
      // the row-state changelog is read by the gates and by every restore (a new group each time)
      const rowstatePoison = new TextEncoder().encode('not an event');
      await log.publisher.publishRaw(TOPICS.rowstate, [{ key: 'refunds', value: rowstatePoison }]);

      // two runs: the second is a restart, which restores from the changelog and rereads its bad record
      for (const instanceId of ['first', 'restart']) {
        const run = await startProcessors(config, { log, untilCaughtUp: true, maxWaitMs: 1, instanceId });
        await run.done;
      }

      const letters = await log.deadLetters();
      const positions = letters.map((l) => `${l.source.topic}/${l.source.partition}/${l.source.offset}`);
      expect(new Set(positions).size).toBe(positions.length);
      expect(letters.map((l) => l.source.topic).sort()).toEqual([
        TOPICS.rowstate,
        TOPICS.trials,
        TOPICS.trials,
        TOPICS.trials,
      ]);
      const byBytes = (bytes: Uint8Array) => letters.find((l) => Buffer.from(l.value).equals(Buffer.from(bytes)));
      expect(byBytes(poison[1]!)?.reason).toMatch(/row_id: holds a lone UTF-16 surrogate/);
      expect(byBytes(poison[2]!)?.reason).toMatch(/attempt/);
      expect(byBytes(rowstatePoison)).toBeDefined();

      const store = await openStore(config, { migrate: false });
      try {
        const q = async (query: string) =>
          (await (await store.client.query({ query, format: 'JSONEachRow' })).json()) as Record<string, unknown>[];
        const stored = await q(
          "SELECT id, source_topic, source_offset, value_base64, reason FROM dead_letters FINAL WHERE stage = 'decode' ORDER BY id",
        );
        expect(stored).toHaveLength(4);
        expect(stored.map((r) => r.id).sort()).toEqual(
          letters.map((l) => `${l.source.topic}/${l.source.partition}/${l.source.offset}`).sort(),
        );
        for (const l of letters) {
          const row = stored.find((r) => r.id === `${l.source.topic}/${l.source.partition}/${l.source.offset}`)!;
          expect(row.value_base64).toBe(Buffer.from(l.value).toString('base64'));
          expect(row.reason).toBe(l.reason);
        }
        // without FINAL too: a second group or a replay wrote the same row (ReplacingMergeTree), never a new id
        const ids = await q("SELECT uniqExact(id) AS n FROM dead_letters WHERE stage = 'decode'");
        expect(Number(ids[0]!.n)).toBe(4);
        const trials = await q('SELECT count() AS n FROM trials FINAL');
        expect(Number(trials[0]!.n)).toBe(good.length);
      } finally {
        await store.close();
      }
    } finally {
      await log.close();
    }
  }, 180_000);
});
