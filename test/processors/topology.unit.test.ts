import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { jsonCodec } from '../../schemas/codec.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { createMemoryLog, type MemoryLog } from '../helpers/memoryLog.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { fromRowStateChanged } from '../../processors/folds/rowState.ts';
import { checkpointOf, foldTrials, restoreTable, type RowTable } from '../../processors/folds/rowTable.ts';
import {
  applyRowChanges,
  summariesOfSnapshots,
  type VersionSummaries,
  type VersionSummary,
} from '../../processors/folds/versionSummary.ts';
import {
  trialTopology,
  type EventSource,
  type TrialSink,
  type TrialTopologyOptions,
  type VersionSnapshot,
} from '../../processors/index.ts';

const workload = (rows: number, versions: number, attempts: number): TrialRecorded[] => {
  const out: TrialRecorded[] = [];
  for (let a = attempts - 1; a >= 0; a--)
    // attempts arrive newest first: order must not matter
    for (let r = 0; r < rows; r++)
      for (let v = 0; v < versions; v++)
        out.push(
          trial({
            row: `r${r}`,
            version: `v${v}`,
            attempt: a,
            passed: (r + v + a) % 3 !== 0,
            output: `o${(r * a) % 2}`,
          }),
        );
  return out;
};

const memorySink = () => {
  const rowStates: RowStateChanged[] = [];
  const trials: TrialRecorded[] = [];
  const summaries: VersionSnapshot[] = [];
  const sink: TrialSink & { rowStates: RowStateChanged[]; trials: TrialRecorded[]; summaries: VersionSnapshot[] } = {
    rowStates,
    trials,
    summaries,
    writeTrials: async (u) => {
      rowStates.push(...u.rowStates);
      trials.push(...u.trials);
      summaries.push(...(u.summaries ?? []));
    },
  };
  return sink;
};

const straightSummaries = (events: readonly TrialRecorded[]): VersionSummary[] => {
  const t: RowTable = new Map();
  const sums: VersionSummaries = new Map();
  applyRowChanges(sums, foldTrials(t, events));
  return [...sums.keys()].sort().map((k) => sums.get(k)!);
};

const changelogOf = async (log: MemoryLog): Promise<RowTable> => {
  const records = await Promise.all(
    log
      .records(TOPICS.rowstate)
      .flat()
      .map((r) => jsonCodec.decode(r.value)),
  );
  return restoreTable(records.map((e) => fromRowStateChanged(e as RowStateChanged)));
};
const straight = (events: readonly TrialRecorded[]): string => {
  const t: RowTable = new Map();
  foldTrials(t, events);
  return JSON.stringify(checkpointOf(t));
};

const options = (over: Partial<TrialTopologyOptions> = {}): TrialTopologyOptions => ({
  instanceId: 'test',
  producer: 'passk-processors/test',
  partitionOf,
  maxBatch: 50,
  maxRows: 200,
  maxWaitMs: 1,
  untilCaughtUpEveryMs: 2,
  ...over,
});

const run = (log: MemoryLog, sink: TrialSink, over: Partial<TrialTopologyOptions> = {}) =>
  lastValueFrom(trialTopology({ source: log, publisher: log.publisher, sink }, options(over)).pipe(toArray()));

describe('trial topology on the in-memory log', () => {
  it('folds every trial once: changelog and sink equal a straight replay, offsets all committed', async () => {
    const log = createMemoryLog();
    const events = workload(30, 2, 3);
    await log.publisher.publish([...events, ...events.slice(0, 40)]); // redelivered duplicates
    const sink = memorySink();
    const progress = await run(log, sink);
    expect(JSON.stringify(checkpointOf(await changelogOf(log)))).toBe(straight(events));
    expect(JSON.stringify(checkpointOf(restoreTable(sink.rowStates.map(fromRowStateChanged))))).toBe(straight(events));
    const consumer = await log.consumer({ groupId: 'passk-trials', topics: [TOPICS.trials] });
    expect((await consumer.lag()).every((l) => l.lag === 0)).toBe(true);
    // a redelivered duplicate is not folded again, so the store's trials get each event once
    expect(progress.reduce((a, p) => a + p.trials, 0)).toBe(events.length);
    expect(new Set(sink.trials.map((t) => t.event_id)).size).toBe(sink.trials.length);
    const totals = progress.at(-1)!.summaries();
    expect(totals.map((s) => s.rows)).toEqual([30, 30]);
    expect(totals.every((s) => s.classes.unclassified === 0)).toBe(true);
    expect(summariesOfSnapshots(sink.summaries)).toEqual(totals);
    expect(summariesOfSnapshots(sink.summaries)).toEqual(straightSummaries(events));
  });

  it('restarted at any point, restores rows from the changelog and ends where one straight run ends', async () => {
    const events = workload(20, 2, 4);
    for (const cut of [1, 57, 100, 159]) {
      const log = createMemoryLog();
      await log.publisher.publish(events.slice(0, cut));
      const first = memorySink();
      await run(log, first);
      await log.publisher.publish(events.slice(cut));
      const second = memorySink();
      await run(log, second);
      expect(JSON.stringify(checkpointOf(await changelogOf(log)))).toBe(straight(events));
      // the restored summaries carry on: the snapshots of both runs add up to one straight run's
      expect(summariesOfSnapshots([...first.summaries, ...second.summaries])).toEqual(straightSummaries(events));
      // the second run re-read no trial published before the cut
      expect(second.trials.length).toBe(events.length - cut);
    }
  });

  // One store across the crash and the rerun: what it holds must equal one straight run's rows.
  const storeRows = (sink: ReturnType<typeof memorySink>) =>
    JSON.stringify(checkpointOf(restoreTable(sink.rowStates.map(fromRowStateChanged))));
  const uniqueTrials = (sink: ReturnType<typeof memorySink>) => new Set(sink.trials.map((t) => t.event_id)).size;

  it('a crash after the store write, before the changelog: the rerun rewrites the same rows, the changelog catches up', async () => {
    const log = createMemoryLog();
    const events = workload(10, 2, 3);
    await log.publisher.publish(events);
    const store = memorySink();
    const publisher = { ...log.publisher, publish: () => Promise.reject(new Error('broker down')) };
    await expect(lastValueFrom(trialTopology({ source: log, publisher, sink: store }, options()))).rejects.toThrow(
      'broker down',
    );
    expect(store.rowStates.length).toBeGreaterThan(0); // the store got the first unit
    expect(log.records(TOPICS.rowstate).flat().length).toBe(0);
    await run(log, store);
    expect(storeRows(store)).toBe(straight(events));
    expect(JSON.stringify(checkpointOf(await changelogOf(log)))).toBe(straight(events));
    expect(uniqueTrials(store)).toBe(events.length);
  });

  /**
   * A store whose `failAt`-th write fails once that unit's changelog is acknowledged (the write and the publish run
   * at the same time): the changelog is ahead of the store, as after a store that failed or a process killed between
   * the two. Writes before it land in `store`.
   */
  const failingAfterPublish = (log: MemoryLog, store: ReturnType<typeof memorySink>, failAt: number) => {
    const acked: (() => void)[] = [];
    const ackOf: Promise<void>[] = Array.from({ length: 64 }, (_, i) => new Promise<void>((r) => (acked[i] = r)));
    let publishes = 0;
    let writes = 0;
    const publisher = {
      ...log.publisher,
      publish: async (e: Parameters<typeof log.publisher.publish>[0]) => {
        const me = publishes++;
        await log.publisher.publish(e);
        acked[me]!();
      },
    };
    const sink: TrialSink = {
      writeTrials: async (u) => {
        const me = writes++;
        if (me + 1 < failAt) return store.writeTrials(u);
        await ackOf[me]; // this unit's changelog is durable…
        throw new Error('store down'); // …and its store write fails
      },
    };
    return { publisher, sink };
  };

  it('a store write that fails after its changelog is published: the restart writes every row to the store, once', async () => {
    for (const failAt of [1, 3]) {
      const log = createMemoryLog();
      const events = workload(10, 2, 3);
      await log.publisher.publish(events);
      const store = memorySink();
      const { publisher, sink } = failingAfterPublish(log, store, failAt);
      const { source, commits } = recordingSource(log);
      await expect(
        lastValueFrom(trialTopology({ source, publisher, sink }, options({ maxBatch: 10, maxRows: 10 }))),
      ).rejects.toThrow('store down');
      // the changelog holds rows the store does not, and nothing past the stored units was committed
      expect(JSON.stringify(checkpointOf(await changelogOf(log)))).not.toBe(storeRows(store));
      expect(commits.length).toBe(failAt - 1);
      expect(uniqueTrials(store)).toBeLessThan(events.length);
      // the restart restores the rows from the changelog and brings the store up to it
      const progress = await run(log, store, { maxBatch: 10, maxRows: 10 });
      expect(storeRows(store)).toBe(straight(events));
      expect(JSON.stringify(checkpointOf(await changelogOf(log)))).toBe(straight(events));
      // every trial in the store, none written twice; the summaries as one straight run's
      expect(uniqueTrials(store)).toBe(events.length);
      expect(store.trials.length).toBe(events.length);
      expect(summariesOfSnapshots(store.summaries)).toEqual(straightSummaries(events));
      expect(progress.at(-1)!.summaries()).toEqual(straightSummaries(events));
    }
  });

  /** The retraction of `t`'s run on its row, dated just after it. */
  const retractionOf = (t: TrialRecorded) => ({
    event_id: '01KA00000000000000000000RT',
    type: 'RunRetracted' as const,
    schema_version: 1 as const,
    occurred_at: t.occurred_at + 1,
    producer: 'test',
    retraction_id: 'x',
    run_id: t.run_id,
    suite: t.suite,
    dataset_version: t.dataset_version,
    agent_version: t.agent.version,
    row_id: t.row_id,
    reason: 'typo',
    retracted_by: 'ana',
    trials: 3,
  });

  it('the repair after a restart: a retracted run and copies in the window, the store equal to one straight run', async () => {
    const events = workload(6, 1, 3);
    const r0 = events.find((e) => e.row_id === 'r0' && e.attempt === 1)!;
    const retracted = retractionOf(r0);
    // a copy of an earlier trial, the retraction of r0's run (after two of its trials), a late trial of that run and
    // r0's last attempt (neither ever counted: the run is retracted before them)
    const late = trial({ row: 'r0', version: 'v0', attempt: 7, passed: true });
    const all = [...events.slice(0, 9), events[0]!, retracted, late, ...events.slice(9)];
    const log = createMemoryLog({ partitions: 1 });
    await log.publisher.publish(all);
    const store = memorySink();
    // the first unit (16 records) fails: r0's stored trials came before the retraction in it
    const { publisher, sink } = failingAfterPublish(log, store, 1);
    await expect(
      lastValueFrom(trialTopology({ source: log, publisher, sink }, options({ maxBatch: 8, maxRows: 16 }))),
    ).rejects.toThrow('store down');
    expect(store.trials.length).toBe(0);
    await run(log, store, { maxBatch: 8, maxRows: 8 });
    // what one straight run into an empty store writes
    const straightStore = memorySink();
    const fresh = createMemoryLog({ partitions: 1 });
    await fresh.publisher.publish(all);
    await run(fresh, straightStore, { maxBatch: 8, maxRows: 8 });
    expect(storeRows(store)).toBe(storeRows(straightStore));
    expect([...new Set(store.trials.map((t) => t.event_id))].sort()).toEqual(
      [...new Set(straightStore.trials.map((t) => t.event_id))].sort(),
    );
    expect(summariesOfSnapshots(store.summaries)).toEqual(summariesOfSnapshots(straightStore.summaries));
  });

  it('the repair after a restart: a copy of a retraction after a late trial of its run does not store that trial', async () => {
    const events = workload(6, 1, 3);
    const r0 = events.find((e) => e.row_id === 'r0' && e.attempt === 1)!;
    const retracted = retractionOf(r0);
    // the retraction, a late trial of its run (never counted, never stored), then a copy of the retraction (an
    // at-least-once duplicate). The first unit's (16 records) store write fails after its changelog is published:
    // with the three in it, the restored row carries the retraction; after it, the restart folds it anew
    const late = trial({ row: 'r0', version: 'v0', attempt: 7, passed: true });
    for (const at of [9, 16]) {
      const all = [...events.slice(0, at), retracted, late, { ...retracted }, ...events.slice(at)];
      const log = createMemoryLog({ partitions: 1 });
      await log.publisher.publish(all);
      const store = memorySink();
      const { publisher, sink } = failingAfterPublish(log, store, 1);
      await expect(
        lastValueFrom(trialTopology({ source: log, publisher, sink }, options({ maxBatch: 8, maxRows: 16 }))),
      ).rejects.toThrow('store down');
      expect(store.trials.length).toBe(0);
      await run(log, store, { maxBatch: 8, maxRows: 8 });
      const straightStore = memorySink();
      const fresh = createMemoryLog({ partitions: 1 });
      await fresh.publisher.publish(all);
      await run(fresh, straightStore, { maxBatch: 8, maxRows: 8 });
      const ids = (s: ReturnType<typeof memorySink>) => [...new Set(s.trials.map((t) => t.event_id))].sort();
      expect(ids(straightStore)).not.toContain(late.event_id);
      expect(ids(store)).toEqual(ids(straightStore));
      expect(storeRows(store)).toBe(storeRows(straightStore));
      expect(summariesOfSnapshots(store.summaries)).toEqual(summariesOfSnapshots(straightStore.summaries));
    }
  });

  /** The log's consumer, with every commit it is asked for recorded (and passed on unless `refuse`). */
  const recordingSource = (log: MemoryLog, onCommit: () => void = () => {}) => {
    const commits: { topic: string; partition: number; nextOffset: number }[][] = [];
    const source: EventSource = {
      consumer: async (o) => {
        const c = await log.consumer(o);
        return {
          batches: () => c.batches(),
          commit: async (positions) => {
            onCommit();
            commits.push(positions.map((p) => ({ topic: p.topic, partition: p.partition, nextOffset: p.nextOffset })));
            await c.commit(positions);
          },
          committed: (t) => c.committed(t),
          lag: () => c.lag(),
          close: () => c.close(),
        };
      },
    };
    return { source, commits };
  };
  it('where the changelog is appended in the commit (publishAndCommit), a restart sets no repair window', async () => {
    const log = createMemoryLog({ partitions: 2 });
    const events = workload(10, 2, 3);
    await log.publisher.publish(events.slice(0, 30));
    let committedReads = 0;
    // the in-memory log made atomic as the embedded log is: the changelog and the offsets in one call
    const source: EventSource = {
      consumer: async (o) => {
        const c = await log.consumer(o);
        return {
          batches: () => c.batches(),
          commit: (positions) => c.commit(positions),
          publishAndCommit: async (changes, positions) => {
            await log.publisher.publish(changes);
            await c.commit(positions);
          },
          publisher: log.publisher,
          committed: (t) => (committedReads++, c.committed(t)),
          lag: () => c.lag(),
          close: () => c.close(),
        };
      },
    };
    const store = memorySink();
    const runAtomic = () =>
      lastValueFrom(trialTopology({ source, publisher: log.publisher, sink: store }, options()).pipe(toArray()));
    await runAtomic();
    expect(log.records(TOPICS.rowstate).flat().length).toBeGreaterThan(0);
    await log.publisher.publish(events.slice(30));
    // the restart restores rows from the changelog on both partitions, and reads no committed positions for a repair
    await runAtomic();
    expect(committedReads).toBe(0);
    expect(storeRows(store)).toBe(straight(events));
  });

  const deferred = () => {
    let resolve = () => {};
    let reject = (_: Error) => {};
    const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
  // small units, several publishes in flight
  const overlapping = { maxBatch: 10, maxRows: 10, maxWaitMs: 1, maxPublishesInFlight: 4 };

  it('overlapping changelog publishes: a failed publish of unit k lets no later unit commit, though its publish succeeded', async () => {
    const log = createMemoryLog();
    const events = workload(10, 2, 3);
    await log.publisher.publish(events);
    const { source, commits } = recordingSource(log);
    const first = deferred();
    let calls = 0;
    let laterAcked = 0;
    const publisher = {
      ...log.publisher,
      publish: async (e: Parameters<typeof log.publisher.publish>[0]) => {
        calls += 1;
        if (calls === 1) return first.promise; // unit 1's publish: fails once unit 2's is acknowledged
        await log.publisher.publish(e);
        laterAcked += 1;
        first.reject(new Error('broker down'));
      },
    };
    const sink = memorySink();
    await expect(
      lastValueFrom(trialTopology({ source, publisher, sink }, options(overlapping)).pipe(toArray())),
    ).rejects.toThrow('broker down');
    expect(laterAcked).toBeGreaterThan(0); // unit 2's changelog is in the log…
    expect(log.records(TOPICS.rowstate).flat().length).toBeGreaterThan(0);
    expect(commits).toEqual([]); // …and not one offset was committed
    // the rerun reads everything again and ends where one straight run ends
    await run(log, sink);
    expect(JSON.stringify(checkpointOf(await changelogOf(log)))).toBe(straight(events));
    expect(storeRows(sink)).toBe(straight(events));
    expect(new Set(sink.trials.map((t) => t.event_id)).size).toBe(events.length);
  });

  it('overlapping changelog publishes: units commit in order, each after its own publish, whatever order the acks come in', async () => {
    const log = createMemoryLog();
    const events = workload(10, 2, 3);
    await log.publisher.publish(events);
    const acked: number[] = [];
    // the n-th commit (one per unit, each unit publishes) must come after the acks of publishes 1..n
    const ackedAtCommit: number[][] = [];
    const { source, commits } = recordingSource(log, () => ackedAtCommit.push([...acked]));
    let calls = 0;
    let commitsAtAck: number[] = [];
    const held: (() => void)[] = [];
    const publisher = {
      ...log.publisher,
      publish: async (e: Parameters<typeof log.publisher.publish>[0]) => {
        const me = ++calls;
        await log.publisher.publish(e);
        // odd units are acknowledged only after the next unit's publish is (or 200 ms on, for a last one)
        if (me % 2 === 1)
          await new Promise<void>((resolve) => {
            held.push(resolve);
            setTimeout(resolve, 200);
          });
        else {
          const release = held.splice(0);
          setTimeout(() => release.forEach((r) => r()), 20);
        }
        acked.push(me);
        commitsAtAck = [...commitsAtAck, commits.length];
      },
    };
    const sink = memorySink();
    const progress = await lastValueFrom(
      trialTopology({ source, publisher, sink }, { ...options(overlapping), untilCaughtUpEveryMs: 5 }).pipe(toArray()),
    );
    expect(calls).toBeGreaterThan(2);
    expect(acked[0]).toBe(2); // unit 2 was acknowledged before unit 1…
    expect(commitsAtAck[0]).toBe(0); // …and nothing was committed before unit 1 was
    expect(progress.length).toBe(commits.length);
    ackedAtCommit.forEach((a, i) =>
      expect(Array.from({ length: i + 1 }, (_, k) => k + 1).every((k) => a.includes(k))).toBe(true),
    );
    // each unit's commit moves every partition it names forward: in order
    const last = new Map<string, number>();
    for (const c of commits)
      for (const p of c) {
        expect(p.nextOffset).toBeGreaterThan(last.get(`${p.topic}/${p.partition}`) ?? -1);
        last.set(`${p.topic}/${p.partition}`, p.nextOffset);
      }
    expect(JSON.stringify(checkpointOf(await changelogOf(log)))).toBe(straight(events));
    expect(storeRows(sink)).toBe(straight(events));
  });

  it('a crash after the changelog publish, before the commit: the store already holds every row state', async () => {
    const log = createMemoryLog();
    const events = workload(10, 2, 3);
    await log.publisher.publish(events);
    const store = memorySink();
    // every commit fails: the whole first run is folded, stored and published, and none of it committed
    const source: EventSource = {
      consumer: async (o) => {
        const c = await log.consumer(o);
        return {
          batches: () => c.batches(),
          commit: () => Promise.reject(new Error('crash before commit')),
          committed: (t) => c.committed(t),
          lag: () => c.lag(),
          close: () => c.close(),
        };
      },
    };
    await expect(
      lastValueFrom(trialTopology({ source, publisher: log.publisher, sink: store }, options())),
    ).rejects.toThrow('crash before commit');
    expect(log.records(TOPICS.rowstate).flat().length).toBeGreaterThan(0);
    await run(log, store); // restores the changed rows from the changelog: the redelivered trials change nothing
    expect(storeRows(store)).toBe(straight(events));
    expect(uniqueTrials(store)).toBe(events.length);
  });

  it('two instances in one group produce the row states of one', async () => {
    const events = workload(40, 2, 3);
    const one = createMemoryLog();
    await one.publisher.publish(events);
    await run(one, memorySink());
    const two = createMemoryLog();
    await two.publisher.publish(events);
    const [a, b] = [memorySink(), memorySink()];
    await Promise.all([run(two, a, { instanceId: 'a' }), run(two, b, { instanceId: 'b' })]);
    expect(a.trials.length).toBeGreaterThan(0);
    expect(b.trials.length).toBeGreaterThan(0);
    expect(a.trials.length + b.trials.length).toBe(events.length);
    expect(JSON.stringify(checkpointOf(await changelogOf(two)))).toBe(
      JSON.stringify(checkpointOf(await changelogOf(one))),
    );
  });

  it('a slow sink pauses consumption: records in flight stay within the window', async () => {
    const log = createMemoryLog({ partitions: 1 });
    await log.publisher.publish(workload(50, 2, 3));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const writes: number[] = [];
    const slow: TrialSink = {
      writeTrials: async (u) => {
        writes.push(u.trials.length);
        await gate;
      },
    };
    let pulled = 0;
    const counting = {
      ...log,
      consumer: async (o: Parameters<MemoryLog['consumer']>[0]) => {
        const c = await log.consumer(o);
        const batches = c.batches.bind(c);
        return {
          ...c,
          batches: async function* () {
            for await (const b of batches()) {
              if (b.topic === TOPICS.trials) pulled += b.events.length;
              yield b;
            }
          },
        };
      },
    };
    const done = lastValueFrom(
      trialTopology(
        { source: counting, publisher: log.publisher, sink: slow },
        options({ maxInFlight: 100, maxRows: 50 }),
      ).pipe(toArray()),
    );
    await new Promise((r) => setImmediate(r)); // let the pipeline reach the blocked write
    for (let i = 0; i < 20 && writes.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(writes.length).toBe(1);
    expect(pulled).toBeLessThanOrEqual(100 + 50);
    release();
    await done;
    expect(pulled).toBe(300);
  });
});
