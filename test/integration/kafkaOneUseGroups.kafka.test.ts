import { Kafka, logLevel } from 'kafkajs';
import { afterAll, expect, inject, it } from 'vitest';
import { ONE_USE_SUFFIX } from '../../log/index.ts';
import { kafkaBackend, publishAll, startChild, until, workload } from '../helpers/processorsHarness.ts';

/**
 * A SIGKILLed processor cannot delete its one-use groups (the gates' tails of passk.datasets and passk.decisions,
 * named by its instance id): the next processor of the namespace deletes them once they are empty, i.e. once the
 * dead member's session has expired (docs/reliability.md). Only the processors' durable groups stay. A processor
 * that writes all of passk.rowstate itself feeds its gates in process (RowstateFeed) and has no tail of it.
 */
const disposers: (() => void)[] = [];
afterAll(() => disposers.forEach((d) => d()));

it('a SIGKILLed processor’s one-use groups are deleted by the next start; only the durable groups stay', async () => {
  const env = kafkaBackend(inject('kafkaBrokers'), inject('schemaRegistryUrl')).fresh();
  disposers.push(env.dispose);
  const log = await env.open();
  const admin = new Kafka({ brokers: inject('kafkaBrokers').split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const ns = env.child.namespace!;
  const groups = async () =>
    (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith(ns))
      .map((g) => g.slice(ns.length))
      .sort();
  try {
    await publishAll(log, workload(10));
    const killed = startChild({ ...env.child, instanceId: 'killed', maxBatch: 20, maxWaitMs: 20 });
    await until(() => killed.owned().size === 4, 150_000, 'the first processor to own the 4 partitions');
    const tails = [
      `passk-gates.passk.datasets.killed${ONE_USE_SUFFIX}`,
      `passk-gates.passk.decisions.killed${ONE_USE_SUFFIX}`,
    ];
    // the tails join their groups during the start
    let listed: string[] = [];
    const joined = Date.now() + 60_000;
    while (Date.now() < joined && !tails.every((t) => listed.includes(t))) {
      listed = await groups();
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(listed).toEqual(expect.arrayContaining(tails));
    // the only writer of passk.rowstate: its gates are fed in process, not through a tail of the topic
    expect(listed).not.toContain(`passk-gates.passk.rowstate.killed${ONE_USE_SUFFIX}`);
    killed.proc.kill('SIGKILL');
    await killed.exited;
    expect(await groups()).toEqual(expect.arrayContaining(tails));

    // restarted at once: the dead member still holds its groups, so a later sweep deletes them (one finds them empty
    // after its session, the next, 15 s on, deletes them)
    const next = startChild({ ...env.child, instanceId: 'next', maxBatch: 20, maxWaitMs: 20 });
    await until(() => next.owned().size === 4, 150_000, 'the restarted processor to own the 4 partitions');
    let left: string[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && (left = (await groups()).filter((g) => g.includes('killed'))).length > 0)
      await new Promise((r) => setTimeout(r, 500));
    expect(left).toEqual([]);

    next.proc.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    expect(await groups()).toEqual(['passk-datasets', 'passk-gates', 'passk-trials', 'passk-windows']);
  } finally {
    await admin.disconnect();
    await log.close();
  }
}, 400_000);
