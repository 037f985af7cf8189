import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import { foldTrials } from '../../processors/folds/rowTable.ts';
import { createGateStore, decideGates } from '../../processors/operators/decideGates.ts';
import { foldDatasets, type DatasetTables } from '../../processors/operators/foldDatasets.ts';
import { createInFlight } from '../../processors/operators/inFlight.ts';
import { tailTopic } from '../../processors/operators/tailTopic.ts';
import { mergeFoldedTraces, windowTraces } from '../../processors/operators/windowTraces.ts';
import type { EventBatch } from '../../processors/ports.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { comparison, datasetRow, failureConfirmed, runOf } from '../helpers/feedbackLoop.ts';
import { T0, trace } from '../helpers/processorFixtures.ts';

const batchOf = (topic: string, partition: number, events: PasskEvent[], first = 0): EventBatch => ({
  topic,
  partition,
  events: events.map((event, i) => ({ topic, partition, offset: first + i, key: 'k', event })),
  lastOffset: first + events.length - 1,
  highWatermark: first + events.length,
});
const marbles = () => new TestScheduler((a, e) => expect(a).toEqual(e));

describe('foldDatasets', () => {
  it('folds dataset batches and emits the row a confirmed failure decides, with the batch position', () => {
    marbles().run(({ cold, expectObservable }) => {
      const tables: DatasetTables = new Map();
      const input = cold('a-b|', {
        a: batchOf(TOPICS.datasets, 2, [datasetRow('v1', 'r1')]),
        b: batchOf(TOPICS.datasets, 2, [failureConfirmed('t1')], 1),
      });
      expectObservable(
        input.pipe(
          foldDatasets(tables, 'p'),
          map((u) => `${u.positions[0]!.nextOffset}:${u.emitted.map((e) => e.dataset_version).join()}`),
        ),
      ).toBe('a-b|', { a: '1:', b: '2:v1.pf1' });
    });
  });
});

describe('decideGates', () => {
  it('decides when the row states complete a declared comparison; commits only the decisions topic', () => {
    const store = createGateStore();
    const rows = ['r1', 'r2'];
    const table = new Map();
    const changelog = foldTrials(table, [...runOf('b', 'd1', rows), ...runOf('c', 'd1', rows)] as TrialRecorded[]).map(
      (ch) => toRowStateChanged(ch.after, 'p'),
    );
    marbles().run(({ cold, expectObservable }) => {
      const input = cold('a-b-c|', {
        a: {
          source: 'decisions' as const,
          batch: batchOf(TOPICS.decisions, 0, [
            comparison('g', 'd1', 'b', 'c', { dataset_id: undefined, rows: 2, confirmation_attempts: 0 }),
          ]),
        },
        b: { source: 'rowstate' as const, batch: batchOf(TOPICS.rowstate, 1, changelog.slice(0, 1)) },
        c: { source: 'rowstate' as const, batch: batchOf(TOPICS.rowstate, 3, changelog.slice(1)) },
      });
      const out = input.pipe(
        decideGates(store, { producer: 'p', partitionOf }),
        map((u) => `${u.positions.length}:${u.emitted.map((e) => e.type === 'GateEvaluated' && e.verdict).join()}`),
      );
      expectObservable(out).toBe('a-b-c|', { a: '1:', b: '0:', c: '0:pass' });
    });
  });
});

describe('windowTraces / mergeFoldedTraces', () => {
  it('keeps the latest snapshot per partition and the furthest position', () => {
    const tables = new Map();
    const units: ReturnType<typeof mergeFoldedTraces>[] = [];
    marbles().run(({ cold }) => {
      cold('abc|', {
        a: batchOf(TOPICS.traces, 0, [trace({ at: T0 + 1, passed: true })]),
        b: batchOf(TOPICS.traces, 1, [trace({ at: T0 + 2, passed: false })]),
        c: batchOf(TOPICS.traces, 0, [trace({ at: T0 + 3, passed: true })], 1),
      })
        .pipe(
          windowTraces(tables, {
            specs: [{ size_ms: 1000, slide_ms: 1000 }],
            allowedLatenessMs: 0,
            producer: 'p',
            partitions: () => 2,
          }),
        )
        .subscribe((u) => units.push(u));
    });
    const merged = mergeFoldedTraces(units);
    expect(merged.positions.map((p) => [p.partition, p.nextOffset])).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect(
      [...merged.snapshots.values()].map((s) => [s.source_partition, s.through_offset, s.shares[0]!.graded]),
    ).toEqual([
      [0, 2, 2],
      [1, 1, 1],
    ]);
    expect(merged.traces).toHaveLength(3);
  });
});

describe('tailTopic', () => {
  it('delivers a whole topic, says when it reached the end it had, and follows what comes after', async () => {
    const log = createMemoryLog();
    await log.publisher.publish([datasetRow('v1', 'a'), datasetRow('v1', 'b')]);
    let stop!: () => void;
    const tail = await tailTopic(log, {
      topic: TOPICS.datasets,
      groupId: 'tail-1',
      inFlight: createInFlight(1_000),
      stop: new Promise<void>((r) => (stop = r)),
    });
    const seen: string[] = [];
    const sub = tail.batches$.subscribe((b) => seen.push(...b.events.map((e) => e.event.event_id)));
    await tail.loaded;
    expect(seen).toHaveLength(2);
    expect(await tail.caughtUp()).toBe(true);
    await log.publisher.publish([datasetRow('v2', 'c')]);
    expect(await tail.caughtUp()).toBe(false);
    while (seen.length < 3) await new Promise((r) => setImmediate(r));
    expect(await tail.caughtUp()).toBe(true);
    stop();
    sub.unsubscribe();
  });
});

describe('inFlight', () => {
  it('has room below its maximum and drains to zero', async () => {
    const w = createInFlight(2);
    w.acquire(2);
    let room = false;
    void w.room().then(() => (room = true));
    await Promise.resolve();
    expect(room).toBe(false);
    w.release(1);
    await Promise.resolve();
    expect(room).toBe(true);
    w.release(5);
    await expect(w.drained()).resolves.toBeUndefined();
    expect(() => createInFlight(0)).toThrow(RangeError);
  });
});
