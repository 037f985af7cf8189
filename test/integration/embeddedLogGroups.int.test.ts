import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitRejected, createEmbeddedEventLog } from '../../log/index.ts';
import type { EventBatch, EventLog } from '../../processors/ports.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { trials } from '../helpers/events.ts';

const open: { dir: string; log: EventLog }[] = [];
afterEach(async () => {
  for (const { dir, log } of open.splice(0)) {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
const fresh = (sessionMs = 5_000) => {
  const dir = mkdtempSync(join(tmpdir(), 'passk-log-groups-'));
  const log = createEmbeddedEventLog({ dataDir: dir, consumer: { pollMs: 10, heartbeatMs: 50, sessionMs } });
  open.push({ dir, log });
  return log;
};

describe('embedded log consumer groups', () => {
  it('hands partitions to a new member only after onRevoked, and refuses commits from the member that gave them up', async () => {
    const log = fresh();
    await log.publisher.publish(trials(800, { rows: 64 }));
    const events: string[] = [];
    const aOwned = new Set<number>();
    const a = await log.consumer({
      groupId: 'g',
      topics: [TOPICS.trials],
      maxBatch: 20,
      onAssigned: (tps) => tps.forEach((tp) => aOwned.add(tp.partition)),
      onRevoked: (tps) => {
        events.push(`A revoked ${tps.map((tp) => tp.partition).join(',')}`);
        tps.forEach((tp) => aOwned.delete(tp.partition));
      },
    });
    const ra = a.batches()[Symbol.asyncIterator]();
    const first = (await ra.next()).value as EventBatch;
    expect([...aOwned].sort()).toEqual([0, 1, 2, 3]); // alone in the group: every partition
    await a.commit([{ topic: first.topic, partition: first.partition, nextOffset: first.lastOffset + 1 }]);
    const committedByA = await a.committed(TOPICS.trials);

    const bOwned = new Set<number>();
    const b = await log.consumer({
      groupId: 'g',
      topics: [TOPICS.trials],
      maxBatch: 20,
      onAssigned: (tps) => {
        events.push(`B assigned ${tps.map((tp) => tp.partition).join(',')}`);
        tps.forEach((tp) => bOwned.add(tp.partition));
      },
    });
    const rb = b.batches()[Symbol.asyncIterator]();
    const bFirst = rb.next();
    // A gives partitions up at its next poll (between batches), then B takes them. A may have read
    // everything by then: its iterator then parks without yielding (but keeps polling), so wait on
    // one pending next() and the clock rather than on next() alone.
    const deadline = Date.now() + 10_000;
    let pending = ra.next();
    while (aOwned.size === 4 && Date.now() < deadline) {
      const got = await Promise.race([
        pending.then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 20)),
      ]);
      if (got) pending = ra.next();
    }
    const bBatch = (await bFirst).value as EventBatch;

    expect(aOwned.size).toBe(2);
    expect(bOwned.size).toBe(2);
    expect([...aOwned].filter((p) => bOwned.has(p))).toEqual([]);
    expect(events.indexOf(events.find((e) => e.startsWith('A revoked'))!)).toBeLessThan(
      events.findIndex((e) => e.startsWith('B assigned')),
    );
    // B starts each partition at the group's committed position
    expect(bBatch.events[0]!.offset).toBe(committedByA.get(bBatch.partition) ?? 0);

    const lost = [...bOwned][0]!;
    const error = await a.commit([{ topic: TOPICS.trials, partition: lost, nextOffset: 1 }]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommitRejected);
    expect((error as CommitRejected).partitions).toEqual([{ topic: TOPICS.trials, partition: lost }]);
    expect((await b.committed(TOPICS.trials)).get(lost)).toBe(committedByA.get(lost)); // nothing was written
  });

  it('gives a closed member’s partitions to the others at once, not when its session would have expired', async () => {
    // Sessions of an hour: partitions that waited for the closed member's session to lapse would never arrive within
    // the test's timeout.
    const log = fresh(3_600_000);
    await log.publisher.publish(trials(200, { rows: 64 }));
    const a = await log.consumer({ groupId: 'g', topics: [TOPICS.trials] });
    await a.batches()[Symbol.asyncIterator]().next();
    const owned = new Set<number>();
    const b = await log.consumer({
      groupId: 'g',
      topics: [TOPICS.trials],
      onAssigned: (tps) => tps.forEach((tp) => owned.add(tp.partition)),
    });
    const rb = b.batches()[Symbol.asyncIterator]();
    await a.close();
    while (owned.size < 4) await rb.next();
    expect([...owned].sort()).toEqual([0, 1, 2, 3]);
  });
});
