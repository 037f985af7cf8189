import { afterAll, describe, inject, it } from 'vitest';
import { expectEvictingDecidesAsNeverEvicting } from '../helpers/gateEvictPhases.ts';
import { kafkaBackend } from '../helpers/processorsHarness.ts';

/**
 * Issue 26, item 6, on Kafka (test/helpers/gateEvictPhases.ts; gateEvict.int.test.ts on the memory and embedded
 * logs): a comparison naming a version a verdict evicted waits for its reload (a one-use consumer group reading
 * passk.rowstate by key) and decides, by the end of the same phase, what the gates that never evict decide, also
 * across a restart (the log closed and opened again).
 */
const backend = kafkaBackend(inject('kafkaBrokers'), inject('schemaRegistryUrl'));
const disposers: (() => void)[] = [];
afterAll(() => disposers.forEach((d) => d()));

const fresh = async () => {
  const env = backend.fresh();
  disposers.push(env.dispose);
  return { log: await env.open(), reopen: () => env.open() };
};

describe('gates that evict row tables (Kafka)', () => {
  it('reload an evicted version before a later comparison names it, and decide as gates that never evict', async () => {
    await expectEvictingDecidesAsNeverEvicting(fresh, 20_000);
  });
});
