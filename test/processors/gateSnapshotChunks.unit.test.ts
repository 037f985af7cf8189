import fc from 'fast-check';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import {
  chunkSnapshot,
  emptyPrefix,
  emptyShelf,
  nextSlot,
  restorePrefix,
  shelve,
  toGateBookSnapshot,
} from '../../processors/folds/gateSnapshot.ts';
import type { DecisionEvent } from '../../processors/folds/gates.ts';
import { gateTopology, type EventSink } from '../../processors/index.ts';
import type { RunClosed } from '../../schemas/events/comparisons.ts';
import type { GateBookSnapshot } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { gateBookChunkKey, gateBookKey, keyOf, TOPICS } from '../../schemas/topics.ts';
import { decisionEvents, prefixContent, foldBatched, throughTheLog, type Rec } from '../helpers/decisionStream.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';

/**
 * Issue 26, item 6: a gate book snapshot larger than the log's largest record (`maxEventBytes`; about 3,000 closed
 * runs in one partition at 1 MB) is written as chunks sharing its id, each under the bound, in one of two slots of
 * keys per partition. A restore joins them only once all are read: the joined snapshot is the whole one, so with the
 * records after it it folds to the full replay; a set missing a chunk (a crash between chunks), even after Kafka's
 * compaction, leaves the previous complete snapshot in use. Before, such a snapshot was not written at all and its
 * partition was read from offset 0 at every start.
 */
const T = Date.UTC(2026, 0, 1);

const closedRun = (i: number, candidate = `cand${i % 7}`): RunClosed => ({
  event_id: deterministicEventId(T + i, 'RunClosed', i),
  type: 'RunClosed',
  schema_version: 1,
  occurred_at: T + i,
  producer: 'p',
  run_id: `run-${i}`,
  suite: 'refunds',
  dataset_version: 'd1',
  agent_version: candidate,
  status: 'completed',
  trials: 3,
  source_event_id: deterministicEventId(T + i, 'RunFinished', i),
});

/** A partition's records: comparisons (declared, confirmed, decided, alerts, adaptive rounds) and many closed runs. */
const streamOf = (comparisons: number, runs: number): Rec[] => {
  const events: DecisionEvent[] = [];
  for (let k = 0; k < comparisons; k++) events.push(...decisionEvents(k, T + k * 1_000, 3));
  for (let i = 0; i < runs; i++) events.splice((i * 7) % (events.length + 1), 0, closedRun(i));
  return events.map((event, offset) => ({ offset, event }));
};

/** Bytes the log writes for a record (the JSON codec). */
const bytesOf = (x: GateBookSnapshot): number => Buffer.byteLength(JSON.stringify(x));

/** What Kafka's compaction may leave of passk.rowstate: the last record of each key, in log order. */
const compacted = (records: readonly GateBookSnapshot[]): GateBookSnapshot[] => {
  const last = new Map<string, number>();
  records.forEach((r, i) => last.set(keyOf(r), i));
  return records.filter((r, i) => last.get(keyOf(r)) === i);
};

const latestOf = (records: readonly GateBookSnapshot[], partition = 0): GateBookSnapshot | undefined => {
  const shelf = emptyShelf();
  for (const r of records) shelve(shelf, r);
  return shelf.latest.get(partition);
};

describe('a chunked gate book snapshot', () => {
  it('is cut under the bound and joined, in any order of its chunks, to the whole: with the rest, the full replay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 1_500, max: 12_000 }),
        fc.boolean(),
        fc.infiniteStream(fc.nat()),
        (comparisons, runs, cut, maxBytes, slotB, order) => {
          const records = streamOf(comparisons, runs);
          const at = cut % (records.length + 1);
          const full = foldBatched(emptyPrefix(), records, [records.length || 1]);
          const whole = toGateBookSnapshot(foldBatched(emptyPrefix(), records.slice(0, at), [5]), 0, 1, 'test');
          const chunks = chunkSnapshot(whole, maxBytes, slotB ? 'b' : 'a').map(throughTheLog);
          if (bytesOf(whole) <= maxBytes) expect(chunks).toEqual([whole]);
          else {
            expect(chunks.length).toBeGreaterThan(1);
            for (const c of chunks) {
              expect(bytesOf(c)).toBeLessThanOrEqual(maxBytes);
              expect(c.chunk).toMatchObject({ snapshot_id: whole.event_id, count: chunks.length });
              expect(keyOf(c)).toBe(gateBookChunkKey(0, slotB ? 'b' : 'a', c.chunk!.index));
            }
          }
          // read back in any order: used only once the last chunk is in, and then it is the whole snapshot
          const shuffled = [...chunks];
          const it = order[Symbol.iterator]();
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = (it.next().value as number) % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
          }
          const shelf = emptyShelf();
          shuffled.forEach((c, i) => {
            shelve(shelf, c);
            expect(shelf.latest.has(0)).toBe(i === shuffled.length - 1);
          });
          const joined = shelf.latest.get(0)!;
          expect(joined).toEqual(whole);
          const restored = restorePrefix(joined);
          foldBatched(restored, records.slice(at), [3]);
          expect(prefixContent(restored)).toEqual(prefixContent(full));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('missing a chunk (a crash between chunks) is not used: the previous complete one is, compacted or not', () => {
    const records = streamOf(20, 400);
    const half = Math.floor(records.length / 2);
    const maxBytes = 20_000;
    const shelf = emptyShelf();
    const first = chunkSnapshot(
      toGateBookSnapshot(foldBatched(emptyPrefix(), records.slice(0, half), [50]), 0, 1, 'test'),
      maxBytes,
      nextSlot(shelf, 0),
    );
    for (const c of first) shelve(shelf, c);
    expect(first.length).toBeGreaterThan(2);
    expect(shelf.latest.get(0)?.through_offset).toBe(half);
    // the next one goes to the other slot; the process dies before its last chunk
    const slot = nextSlot(shelf, 0);
    expect(slot).not.toBe(first[0]!.chunk!.slot);
    const second = chunkSnapshot(
      toGateBookSnapshot(foldBatched(emptyPrefix(), records, [50]), 0, 1, 'test'),
      maxBytes,
      slot,
    );
    const written = [...first, ...second.slice(0, -1)];
    for (const log of [written, compacted(written)]) {
      const latest = latestOf(log)!;
      expect(latest.through_offset).toBe(half);
      const restored = restorePrefix(latest);
      foldBatched(restored, records.slice(half), [7]);
      expect(prefixContent(restored)).toEqual(prefixContent(foldBatched(emptyPrefix(), records, [records.length])));
    }
    // a later whole snapshot of the partition is still taken over a chunked one, and the other way round
    const all = [...written, second.at(-1)!];
    expect(latestOf(compacted(all))?.through_offset).toBe(records.length);
    const small = toGateBookSnapshot(foldBatched(emptyPrefix(), records.slice(0, 3), [3]), 0, 1, 'test');
    expect(keyOf(small)).toBe(gateBookKey(0));
    expect(latestOf([small, ...first])?.through_offset).toBe(half);
    expect(latestOf([...first, small])?.through_offset).toBe(half);
  });

  it('is written by the gates at a clean stop when the partition’s snapshot is over maxEventBytes', async () => {
    const maxEventBytes = 20_000;
    const log = createMemoryLog({ partitions: 1, maxEventBytes });
    // 300 runs closed on one candidate (one partition), about 100 KB of snapshot: five records' worth
    const runs = Array.from({ length: 300 }, (_, i) => closedRun(i, 'cand'));
    for (let i = 0; i < runs.length; i += 50) await log.publisher.publish(runs.slice(i, i + 50));
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    let probe: (() => Promise<boolean>) | undefined;
    const sink: EventSink = { writeEvents: async () => {}, writeWindows: async () => {} };
    const done = lastValueFrom(
      gateTopology(
        { source: log, publisher: log.publisher, sink },
        {
          instanceId: 'chunks',
          producer: 'passk-processors/test',
          partitionOf,
          maxBatch: 50,
          snapshotBytes: maxEventBytes,
          stop: stopped,
          onIdleProbe: (p) => (probe = p),
        },
      ),
      { defaultValue: undefined },
    );
    for (let i = 0; i < 2_000 && !(probe && (await probe())); i++) await new Promise((r) => setTimeout(r, 2));
    expect(probe && (await probe())).toBe(true);
    stop();
    await done;

    const written: GateBookSnapshot[] = [];
    for (const part of log.records(TOPICS.rowstate))
      for (const r of part) {
        const e = await log.codec.decode(r.value);
        if (e.type === 'GateBookSnapshot') {
          expect(r.value.byteLength).toBeLessThanOrEqual(maxEventBytes);
          written.push(e);
        }
      }
    expect(written.length).toBeGreaterThan(1);
    const latest = latestOf(written);
    expect(latest?.through_offset).toBe(runs.length);
    const full = foldBatched(
      emptyPrefix(),
      runs.map((event, offset) => ({ offset, event })),
      [runs.length],
    );
    expect(prefixContent(restorePrefix(latest))).toEqual(prefixContent(full));
  });
});
