import { describe, expect, it } from 'vitest';
import { TOPICS } from '../../schemas/topics.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import { foldTrials } from '../../processors/folds/rowTable.ts';
import { stopListeners } from '../../processors/operators/onStop.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';

describe('readToEnd', () => {
  it('reads every partition to the end it had when the read began, and stops', async () => {
    const log = createMemoryLog();
    const table = new Map();
    const changes = foldTrials(
      table,
      Array.from({ length: 30 }, (_, i) => trial({ row: `r${i}`, version: 'v', attempt: 0, passed: true })),
    );
    await log.publisher.publish(changes.map((c) => toRowStateChanged(c.after, 'p')));
    const seen: string[] = [];
    const stop = new Promise<void>(() => {});
    const read = await readToEnd(log, {
      topic: TOPICS.rowstate,
      groupId: 'restore-1',
      onEvent: (e) => seen.push(e.event_id),
      stop,
    });
    expect(read).toBe(30);
    expect(new Set(seen).size).toBe(30);
    expect(stopListeners(stop)).toBe(0); // a restore per rebalance leaves nothing on a long-lived stop
  });

  it('stops at given positions, and returns at once on an empty topic', async () => {
    const log = createMemoryLog({ partitions: 1 });
    expect(await readToEnd(log, { topic: TOPICS.datasets, groupId: 'g', onEvent: () => {} })).toBe(0);
    await log.publisher.publish(
      Array.from({ length: 10 }, (_, i) => trial({ row: `r${i}`, version: 'v', attempt: 0, passed: true })),
    );
    const read = await readToEnd(log, {
      topic: TOPICS.trials,
      groupId: 'g2',
      upTo: new Map([[0, 4]]),
      onEvent: () => {},
    });
    expect(read).toBe(4);
  });
});
