import { afterAll, expect, inject, it } from 'vitest';
import {
  changelogState,
  kafkaBackend,
  publishAll,
  startChild,
  straightReplay,
  until,
  workload,
} from '../helpers/processorsHarness.ts';

/**
 * Regression of the fault campaign's seed 7015860 (docs/reliability.md): a processor that hangs past its
 * session is dropped from the group; another member takes its partitions and folds new trials on them; the
 * first one wakes, joins again as a new member and gets some of the same partitions back. It must restore
 * them from the changelog, not fold on the state it held before it hung (which lacks the other member's
 * trials: before the fix, rows lost counted events).
 */
const disposers: (() => void)[] = [];
afterAll(() => disposers.forEach((d) => d()));

it('a member evicted while it hung restores the partitions it gets back (= one straight replay)', async () => {
  const env = kafkaBackend(inject('kafkaBrokers'), inject('schemaRegistryUrl')).fresh();
  disposers.push(env.dispose);
  const log = await env.open();
  // attempts newest first: each third of the workload touches every row once more
  const events = workload(60);
  const [first, second, rest] = [events.slice(0, 120), events.slice(120, 240), events.slice(240)];
  const a = startChild({ ...env.child, instanceId: 'a', maxBatch: 20, maxWaitMs: 20 });
  await until(() => a.owned().size === 4, 150_000, 'a to own the 4 partitions');
  await publishAll(log, first);
  await until(() => a.committed() >= first.length, 150_000, 'a to commit the first third');

  a.proc.kill('SIGSTOP'); // hangs: no heartbeats; after the 10 s session the group drops it
  const b = startChild({ ...env.child, instanceId: 'b', maxBatch: 20, maxWaitMs: 20 });
  await until(() => b.owned().size === 4, 150_000, 'b to take all 4 partitions from the hung member');
  await publishAll(log, second);
  await until(() => b.committed() >= second.length, 150_000, 'b to commit the second third');

  a.proc.kill('SIGCONT');
  await until(
    () => a.owned().size > 0 && b.owned().size < 4 && a.owned().size + b.owned().size === 4,
    150_000,
    'a to rejoin and get partitions back',
  );
  await publishAll(log, rest);
  await until(() => a.committed() + b.committed() >= events.length, 150_000, 'both to commit everything');
  a.proc.kill('SIGTERM');
  b.proc.kill('SIGTERM');
  expect(await a.exited).toBe(0);
  expect(await b.exited).toBe(0);
  expect(await changelogState(log)).toBe(await straightReplay(log));
  await log.close();
}, 400_000);
