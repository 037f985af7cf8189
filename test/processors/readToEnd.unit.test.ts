import { describe, expect, it, vi } from 'vitest';
import {
  gateBookChunkKey,
  gateBookKey,
  isSnapshotKey,
  keyOf,
  rowKey,
  TOPICS,
  windowsKey,
} from '../../schemas/topics.ts';
import { emptyPrefix, toGateBookSnapshot } from '../../processors/folds/gateSnapshot.ts';
import { DEFAULT_WINDOWS, emptyWindows, toWindowsSnapshot } from '../../processors/folds/windows.ts';
import { readSnapshots } from '../../processors/topologies/windows.ts';
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

  it('decodes and hands over only the records whose key `keys` accepts; the read still reaches the end', async () => {
    const log = createMemoryLog();
    const table = new Map();
    const changes = foldTrials(
      table,
      Array.from({ length: 30 }, (_, i) => trial({ row: `r${i}`, version: 'v', attempt: 0, passed: true })),
    );
    const windows = [0, 1].map((p) =>
      toWindowsSnapshot(emptyWindows(p), 2, 'p', { specs: DEFAULT_WINDOWS, allowedLatenessMs: 0 }),
    );
    const books = [0, 3].map((p) => toGateBookSnapshot(emptyPrefix(), p, 4, 'p'));
    await log.publisher.publish([...changes.map((c) => toRowStateChanged(c.after, 'p')), ...windows, ...books]);
    const decode = log.codec.decodeNow ? vi.spyOn(log.codec, 'decodeNow') : vi.spyOn(log.codec, 'decode');
    const seen: string[] = [];
    const read = await readToEnd(log, {
      topic: TOPICS.rowstate,
      groupId: 'snapshots',
      keys: isSnapshotKey,
      onEvent: (e) => seen.push(e.type),
    });
    expect(read).toBe(4);
    expect(seen.sort()).toEqual(['GateBookSnapshot', 'GateBookSnapshot', 'TraceWindowsUpdated', 'TraceWindowsUpdated']);
    expect(decode).toHaveBeenCalledTimes(4); // the 30 row states were not decoded
    decode.mockRestore();
    const got = await readSnapshots(log, 'snapshots-2');
    expect(got.snapshots.map((x) => x.source_partition).sort()).toEqual([0, 1]);
    expect(got.books.map((b) => b.partition).sort()).toEqual([0, 3]);
  });

  it('isSnapshotKey: the keys of snapshots, never a row state’s, whatever its suite is called', () => {
    expect([windowsKey(0), windowsKey(17), gateBookKey(3), gateBookChunkKey(3, 'b', 12)].every(isSnapshotKey)).toBe(
      true,
    );
    for (const suite of ['windows', 'gatebook', 'w']) expect(isSnapshotKey(rowKey(suite, 'd', 'a', 'r'))).toBe(false);
    expect(
      ['windowsX\u001f1', 'gatebooks\u001f1', 'windows', 'gatebook', '', 'windows\u001f1\u001fa0'].some(isSnapshotKey),
    ).toBe(false);
    const snapshot = toGateBookSnapshot(emptyPrefix(), 2, 4, 'p');
    expect(isSnapshotKey(keyOf(snapshot))).toBe(true);
  });
});
