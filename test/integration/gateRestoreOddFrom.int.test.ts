import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { chunkSnapshot, emptyPrefix, toGateBookSnapshot } from '../../processors/folds/gateSnapshot.ts';
import { applyRowstate, createGateStore, type GateStore } from '../../processors/operators/decideGates.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { EventConsumer, EventLog, EventSource } from '../../processors/ports.ts';
import { restoreSnapshotsOnly } from '../../processors/topologies/gates.ts';
import type { GateBookSnapshot } from '../../schemas/events/index.ts';
import { KEY_SEP, TOPICS } from '../../schemas/topics.ts';
import { base } from '../helpers/poison.ts';

/**
 * Issue 26, item 6: the embedded log never compacts passk.rowstate, so each gate book snapshot ever written (one per
 * `gateSnapshotEvery` records of a partition and one per stop) stayed a record of its key, and every gates restore
 * read and decoded them all. The outline now says where each partition's read of the other keys may start
 * (`oddFrom`: each snapshot key's latest record, each other key's first), as compaction would leave the topic: the
 * restore must hold exactly what a read of every record gives.
 */
const withLog = async <T>(partitions: number, body: (log: EventLog) => Promise<T>): Promise<T> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-oddfrom-'));
  const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL', partitions });
  try {
    return await body(log);
  } finally {
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

/** The source, counting the events its consumers hand over. */
const counting = (log: EventLog): { source: EventSource; read: () => number } => {
  let n = 0;
  const wrap = (c: EventConsumer): EventConsumer =>
    new Proxy(c, {
      get(target, key) {
        if (key === 'batches')
          return async function* () {
            for await (const b of target.batches()) {
              n += b.events.length;
              yield b;
            }
          };
        const v = Reflect.get(target, key) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  const source = new Proxy(log, {
    get(target, key) {
      if (key === 'consumer') return async (o: Parameters<EventLog['consumer']>[0]) => wrap(await target.consumer(o));
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { source, read: () => n };
};

/** A snapshot of decisions partition `d` through `through`, holding `ids` decided ids (enough to need chunks). */
const snapshot = (d: number, through: number, ids: number): GateBookSnapshot => {
  const s = emptyPrefix();
  s.through = through;
  s.at = through;
  s.book.decided = Object.fromEntries(Array.from({ length: ids }, (_, i) => [`gate-${d}-${through}-${i}`, true]));
  return toGateBookSnapshot(s, d, 4, 'test');
};

/** What a restore holds of the snapshots: each partition's latest, and the slots of its chunked ones. */
const held = (store: GateStore) => ({
  latest: new Map([...store.bookSnapshots].map(([p, s]) => [p, s.event_id])),
  throughs: new Map([...store.bookSnapshots].map(([p, s]) => [p, s.through_offset])),
  slots: new Map(store.bookShelf.slots),
});

/** The reference: every record of passk.rowstate read from 0, the snapshots and other keys applied. */
const readingEverything = async (log: EventSource, group: string): Promise<GateStore> => {
  const store = createGateStore({ forgetDecided: true });
  const none = { versions: new Set<string>(), windows: new Set<string>() };
  await readToEnd(log, {
    topic: TOPICS.rowstate,
    groupId: group,
    keys: (key) => key.split(KEY_SEP).length !== 4,
    onEvent: (event) => applyRowstate(store, [event], none),
  });
  return store;
};

describe("the embedded gates' restore of passk.rowstate's other keys", () => {
  it('reads each snapshot key from its latest record: 4 records, not the 120 snapshots written', async () => {
    await withLog(1, async (log) => {
      for (let round = 1; round <= 30; round++)
        await log.publisher.publish(
          [0, 1, 2, 3].map((d) => snapshot(d, round * 100, 2)),
          { trusted: true },
        );
      const { source, read } = counting(log);
      const store = createGateStore({ forgetDecided: true });
      await restoreSnapshotsOnly(source, store, 'oddfrom-restore');
      expect(read()).toBe(4); // fails on the code before: 120
      expect(held(store)).toEqual(held(await readingEverything(log, 'oddfrom-all')));
      expect([...store.bookSnapshots.values()].map((s) => s.through_offset)).toEqual([3_000, 3_000, 3_000, 3_000]);
    });
  });

  it('holds what a read of every record holds: whole and chunked snapshots, sets cut by a crash, other keys', async () => {
    // a step: decisions partition d writes a whole snapshot, a chunked one, or a chunked one cut after its first chunk
    // (a crash); or another key (an id holding the separator) is written
    const step = fc.record({
      d: fc.nat(3),
      kind: fc.constantFrom('whole', 'chunked', 'crashed', 'other'),
      advance: fc.integer({ min: 1, max: 50 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, partitions) =>
          withLog(partitions, async (log) => {
            const through = [0, 0, 0, 0];
            const lastSlot: ('a' | 'b' | undefined)[] = [undefined, undefined, undefined, undefined];
            let others = 0;
            for (const { d, kind, advance } of steps) {
              if (kind === 'other') {
                const key = ['odd', `k${others % 3}`].join(KEY_SEP);
                const value = new TextEncoder().encode(JSON.stringify({ ...base, row_id: `r${others++}` }));
                await log.publisher.publishRaw(TOPICS.rowstate, [{ key, value }]);
                continue;
              }
              through[d] = through[d]! + advance;
              if (kind === 'whole') {
                await log.publisher.publish([snapshot(d, through[d]!, 2)], { trusted: true });
                continue;
              }
              // as the gates write them: into the slot the latest complete chunked snapshot is not in
              const slot = lastSlot[d] === 'a' ? 'b' : 'a';
              const chunks = chunkSnapshot(snapshot(d, through[d]!, 40), 900, slot);
              expect(chunks.length).toBeGreaterThan(1);
              await log.publisher.publish(kind === 'crashed' ? chunks.slice(0, 1) : chunks, { trusted: true });
              if (kind === 'chunked') lastSlot[d] = slot;
            }
            const { source, read } = counting(log);
            const store = createGateStore({ forgetDecided: true });
            await restoreSnapshotsOnly(source, store, 'oddfrom-restore');
            const everything = counting(log);
            const reference = await readingEverything(everything.source, 'oddfrom-all');
            expect(held(store)).toEqual(held(reference));
            expect(read()).toBeLessThanOrEqual(everything.read());
          }),
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
