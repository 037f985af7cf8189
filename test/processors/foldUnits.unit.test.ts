import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { trial } from '../helpers/processorFixtures.ts';
import type { EventBatch } from '../../processors/ports.ts';
import { foldUnits } from '../../processors/operators/foldUnits.ts';
import { createRowStore } from '../../processors/operators/rowStore.ts';
import { fromRowStateChanged, type StreamRowState } from '../../processors/folds/rowState.ts';
import { rowStateKey } from '../../schemas/topics.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';

const batchOf = (partition: number, events: PasskEvent[], firstOffset = 0, highWatermark = 100): EventBatch => ({
  topic: 'passk.trials',
  partition,
  events: events.map((event, i) => ({ topic: 'passk.trials', partition, offset: firstOffset + i, key: 'k', event })),
  lastOffset: firstOffset + events.length - 1,
  highWatermark,
});
const t = (row: string, attempt: number, passed: boolean) => trial({ row, version: 'v1', attempt, passed });

describe('foldUnits', () => {
  it('folds each unit’s batches into their partitions’ tables and emits one record per row it changed', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const store = createRowStore();
      const a = batchOf(0, [t('r1', 0, true), t('r1', 1, true), t('r2', 0, false)]);
      const b = batchOf(0, [t('r1', 1, true), t('r1', 2, false)], 3, 5); // a redelivered attempt, then a new one
      const out = cold('ab|', { a: [a], b: [b] }).pipe(foldUnits(store, 'p'));
      expectObservable(out).toBe('xy|', {
        x: expect.objectContaining({
          positions: [{ topic: 'passk.trials', partition: 0, nextOffset: 3 }],
          weight: 3,
          changelog: [
            expect.objectContaining({ row_id: 'r1', n: 2, seq: 2 }),
            expect.objectContaining({ row_id: 'r2', n: 1 }),
          ],
        }),
        y: expect.objectContaining({
          changelog: [expect.objectContaining({ row_id: 'r1', n: 3, c: 2, class: 'flip', seq: 3 })],
          lag: [{ topic: 'passk.trials', partition: 0, lag: 0 }],
        }),
      });
    });
  });

  it('counts events of other types without folding them, and keeps RunFinished for the sink', () => {
    const store = createRowStore();
    const finished: PasskEvent = {
      event_id: '01KA0000000000000000000000',
      type: 'RunFinished',
      schema_version: 1,
      occurred_at: 1,
      producer: 'p',
      run_id: 'run-1',
      suite: 'refunds',
      dataset_version: 'd1',
      agent: { version: 'v1' },
      status: 'completed',
      trials: 3,
    };
    let out: unknown;
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold }) => {
      cold('a|', { a: [batchOf(1, [finished, t('r1', 0, true)])] })
        .pipe(foldUnits(store, 'p'))
        .subscribe((f) => (out = f));
    });
    expect(out).toMatchObject({ finished: [finished], trials: [expect.anything()], skipped: 0 });
    expect(store.summaries(1).size).toBe(1);
  });

  it('a unit of several batches: the latest state per row, the furthest position per partition', () => {
    const store = createRowStore();
    const units: {
      positions: unknown;
      changelog: { row_id: string; seq: number }[];
      weight: number;
      trials: unknown[];
    }[] = [];
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold }) => {
      cold('a|', {
        a: [batchOf(0, [t('r1', 0, true)]), batchOf(1, [t('r9', 0, true)]), batchOf(0, [t('r1', 1, false)], 1)],
      })
        .pipe(foldUnits(store, 'p'))
        .subscribe((f) => units.push({ ...f, changelog: [...f.changelog], trials: [...f.trials] }));
    });
    const [unit] = units;
    expect(unit!.positions).toEqual([
      { topic: 'passk.trials', partition: 0, nextOffset: 2 },
      { topic: 'passk.trials', partition: 1, nextOffset: 1 },
    ]);
    expect(unit!.changelog.map((r) => [r.row_id, r.seq])).toEqual([
      ['r1', 2],
      ['r9', 1],
    ]);
    expect(unit!.weight).toBe(3);
    expect(unit!.trials.length).toBe(3);
  });

  it('a record is a copy: folding the next unit leaves the records already emitted as they were', () => {
    const store = createRowStore();
    const emitted: { record: unknown; bytes: string }[] = [];
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold }) => {
      cold('ab|', {
        a: [batchOf(0, [t('r1', 0, true), t('r1', 1, true)])],
        b: [batchOf(0, [t('r1', 2, false), t('r1', 3, false)], 2)],
      })
        .pipe(foldUnits(store, 'p'))
        .subscribe((f) => {
          for (const record of f.changelog) emitted.push({ record, bytes: JSON.stringify(record) });
        });
    });
    expect(emitted).toHaveLength(2);
    for (const e of emitted) expect(JSON.stringify(e.record)).toBe(e.bytes);
  });

  it('hands each record’s row state frozen: what the gates made of the record, left as it was by the next unit', () => {
    const store = createRowStore();
    const units: { changelog: readonly RowStateChanged[]; states: readonly StreamRowState[]; bytes: string }[] = [];
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold }) => {
      cold('ab|', {
        a: [batchOf(0, [t('r1', 0, true), t('r2', 0, false), t('r1', 1, true)])],
        b: [batchOf(0, [t('r1', 2, false), t('r2', 1, true)], 3)],
      })
        .pipe(foldUnits(store, 'p'))
        .subscribe((f) => units.push({ changelog: f.changelog, states: f.states, bytes: JSON.stringify(f.states) }));
    });
    expect(units).toHaveLength(2);
    for (const u of units) {
      expect(u.states).toHaveLength(u.changelog.length);
      u.states.forEach((s, i) => {
        expect(Object.isFrozen(s)).toBe(true);
        expect(s).toEqual(fromRowStateChanged(u.changelog[i]!));
      });
      // the next unit changed copies: the states handed over are as they were
      expect(JSON.stringify(u.states)).toBe(u.bytes);
    }
    const [first, second] = units;
    expect(first!.states.map((s) => [s.row_id, s.n])).toEqual([
      ['r1', 2],
      ['r2', 1],
    ]);
    expect(second!.states.map((s) => [s.row_id, s.n])).toEqual([
      ['r1', 3],
      ['r2', 2],
    ]);
    // the table holds the latest, which the next unit will copy before changing
    expect(store.table(0).get(rowStateKey(second!.states[0]!))).toBe(second!.states[0]);
  });
});
