import { afterAll, describe, expect, inject, it } from 'vitest';
import { runPhases } from '../helpers/gateEvictPhases.ts';
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
    const full = await runPhases(await fresh(), undefined, 20_000);
    const evicting = await runPhases(await fresh(), 86_400_000, 20_000);
    expect(full.reloads).toBe(0);
    expect(evicting.reloads).toBeGreaterThanOrEqual(1);
    expect(full.phased.map((vs) => vs.map((v) => v.split(' ')[0]))).toEqual([
      ['gate-1'],
      ['gate-1', 'gate-2'],
      ['gate-1', 'gate-2', 'gate-3'],
    ]);
    expect(evicting.phased).toEqual(full.phased);
  });
});
