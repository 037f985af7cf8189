import fc from 'fast-check';
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { TraceWindowsUpdated, WindowShareRecord } from '../../schemas/events/traceWindowsUpdated.ts';
import {
  emptyWindows,
  foldTrace,
  pruneWindows,
  restoreWindows,
  toWindowsSnapshot,
  windowStarts,
  type WindowsState,
} from '../../processors/folds/windows.ts';
import { alertFor, normalCdf, totalOf, windowKeyOf } from '../../processors/folds/windowTotals.ts';
import { windowTraces, type WindowTables } from '../../processors/operators/windowTraces.ts';
import type { EventBatch } from '../../processors/ports.ts';
import { T0, trace } from '../helpers/processorFixtures.ts';

const H = 3_600_000;
const o = {
  specs: [
    { size_ms: H, slide_ms: H },
    { size_ms: 4 * H, slide_ms: H },
  ],
  allowedLatenessMs: 10 * 60_000,
};
const fold = (traces: ReturnType<typeof trace>[], s: WindowsState = emptyWindows(0), from = 0) => {
  const changed = new Set<string>();
  traces.forEach((t, i) => foldTrace(s, t, from + i, o).forEach((k) => changed.add(k)));
  return { s, changed };
};
const snap = (s: WindowsState, partitions = 1) => toWindowsSnapshot(s, partitions, 'p', o);
const updates = (s: WindowsState) => snap(s).shares;
const totalAt = (start: number, size: number, ...snaps: TraceWindowsUpdated[]) =>
  totalOf(
    windowKeyOf({ agent_version: 'v1', segment: 'all', grader: 'online', size_ms: size, start }),
    new Map(snaps.map((x) => [x.source_partition, x])),
  )!;
const hour = (h: number, m = 0) => T0 + h * H + m * 60_000;

describe('production windows (first stage)', () => {
  it('counts a trace once: a later revision of it (spans that came after it was recorded) changes nothing', () => {
    const first = trace({ at: hour(1, 1), fingerprint: 'a', probability: 0.5, passed: true });
    const revised = { ...first, event_id: `${first.event_id.slice(0, 25)}Z`, revision: 1, input_fingerprint: 'b' };
    const { s, changed } = fold([first]);
    expect(foldTrace(s, revised, 1, o)).toEqual([]);
    expect(changed.size).toBeGreaterThan(0);
    expect(updates(s).find((u) => u.size_ms === H)).toMatchObject({ graded: 1, w: 2, repeated: 0 });
  });

  it('puts a trace in one tumbling window and in every sliding window that holds it', () => {
    expect(windowStarts(hour(5, 30), { size_ms: H, slide_ms: H })).toEqual([hour(5)]);
    expect(windowStarts(hour(5, 30), { size_ms: 4 * H, slide_ms: H })).toEqual([hour(2), hour(3), hour(4), hour(5)]);
  });

  it('weights each trace by 1/probability (Horvitz–Thompson) and counts ungraded apart', () => {
    const { s } = fold([
      trace({ at: hour(1, 1), fingerprint: 'a', probability: 0.5, passed: true }),
      trace({ at: hour(1, 2), fingerprint: 'b', probability: 0.1, passed: false }),
      trace({ at: hour(1, 3), fingerprint: 'c', probability: 1, passed: null }),
    ]);
    const hourly = updates(s).find((u) => u.size_ms === H)!;
    expect(hourly).toMatchObject({ graded: 2, ungraded: 1, w: 12, wy: 2, w2: 104, w2y: 4 });
    expect(totalAt(hour(1), H, snap(s)).pass_rate).toBeCloseTo(2 / 12, 12);
  });

  it('catches flips: the same input fingerprint with different verdicts', () => {
    const { s } = fold([
      trace({ at: hour(1, 1), fingerprint: 'same', passed: true }),
      trace({ at: hour(1, 2), fingerprint: 'same', passed: false }),
      trace({ at: hour(1, 3), fingerprint: 'other', passed: true }),
      trace({ at: hour(1, 4), fingerprint: 'other', passed: true }),
    ]);
    expect(updates(s).find((u) => u.size_ms === H)).toMatchObject({ repeated: 2, flipping: 1 });
  });

  it('closes a window once event time passes its end plus the lateness; a later trace for it is late', () => {
    const { s, changed } = fold([trace({ at: hour(1, 5), passed: true }), trace({ at: hour(2, 9), passed: true })]);
    expect(updates(s).find((u) => u.start === hour(1) && u.size_ms === H)!.closed).toBe(false);
    fold([trace({ at: hour(2, 11), passed: true })], s, 2);
    const closed = updates(s).find((u) => u.start === hour(1) && u.size_ms === H)!;
    expect(closed).toMatchObject({ closed: true, graded: 1 });
    fold([trace({ at: hour(1, 30), fingerprint: 'late', passed: false })], s, 3);
    expect(updates(s).find((u) => u.start === hour(1) && u.size_ms === H)).toMatchObject({ graded: 1, late: 1 });
    expect(changed.size).toBeGreaterThan(0);
  });

  it('a late trace that is the first of its window opens it, closed, counted late and in no sum', () => {
    const { s } = fold([trace({ at: hour(3, 5), passed: true })]);
    // hour 1 never had a trace; the watermark (hour 3:05 minus the lateness) is past its end
    fold([trace({ at: hour(1, 30), fingerprint: 'late', passed: false })], s, 1);
    const opened = updates(s).find((u) => u.start === hour(1) && u.size_ms === H);
    expect(opened).toMatchObject({ closed: true, graded: 0, ungraded: 0, w: 0, late: 1 });
  });

  it('ignores a redelivered trace (same event id)', () => {
    const t = trace({ at: hour(1, 1), passed: true });
    const { s } = fold([t, t]);
    expect(updates(s)[0]).toMatchObject({ graded: 1 });
  });

  it('restored from its latest shares and continued = one straight run, for any split point', () => {
    const arb = fc.array(
      fc.record({
        minute: fc.integer({ min: 0, max: 600 }),
        p: fc.constantFrom(0.1, 0.5, 1),
        passed: fc.constantFrom(true, false, null),
      }),
      { maxLength: 40 },
    );
    fc.assert(
      fc.property(arb, fc.nat(), (specs, cut) => {
        const traces = specs.map((x, i) =>
          trace({ at: T0 + x.minute * 60_000, fingerprint: `f${i}`, probability: x.p, passed: x.passed }),
        );
        const i = cut % (traces.length + 1);
        const head = fold(traces.slice(0, i)).s;
        const saved: TraceWindowsUpdated = JSON.parse(JSON.stringify(snap(pruneWindows(head, o))));
        // a restore re-reads from a commit that may lag the snapshot: offsets before `through` are skipped
        const resumed = fold(traces, restoreWindows(0, [saved], o)).s;
        const straight = fold(traces).s;
        const strip = (s: WindowsState) => updates(pruneWindows(s, o));
        expect(strip(resumed)).toEqual(strip(straight));
      }),
    );
  });
});

describe('production windows (second stage)', () => {
  it('sums the shares of every partition; the interval narrows with volume and widens with unequal weights', () => {
    const a = fold([
      trace({ at: hour(1, 1), fingerprint: 'a', passed: true }),
      trace({ at: hour(1, 2), fingerprint: 'b', passed: false }),
    ]).s;
    const b = fold([trace({ at: hour(1, 3), fingerprint: 'c', probability: 0.25, passed: true })], emptyWindows(1)).s;
    const total = totalAt(hour(1), H, snap(a, 2), snap(b, 2));
    expect(total).toMatchObject({ graded: 3, w: 6, wy: 5 });
    expect(total.pass_rate).toBeCloseTo(5 / 6, 12);
    expect(total.interval![0]).toBeLessThan(5 / 6);
    expect(total.interval![1]).toBeGreaterThan(5 / 6);
  });

  it('alerts when a closed window is significantly below offline pass@1, and not otherwise', () => {
    const traces = Array.from({ length: 200 }, (_, i) =>
      trace({ at: hour(1) + i * 1000, fingerprint: `f${i}`, passed: i % 2 === 0 }),
    );
    const { s } = fold([...traces, trace({ at: hour(3), fingerprint: 'tick', passed: true })]);
    const total = totalAt(hour(1), H, snap(s));
    expect(total.closed).toBe(true);
    expect(totalAt(hour(1), H, snap(s, 2)).closed).toBe(false); // partition 1 has not passed the window's end
    expect(alertFor(total, 0.9, { producer: 'p' })).toMatchObject({
      type: 'WindowAlertRaised',
      pass_rate: 0.5,
      offline_pass_at_1: 0.9,
      sampled: 200,
    });
    expect(alertFor(total, 0.52, { producer: 'p' })).toBeUndefined(); // within noise
    expect(alertFor({ ...total, closed: false }, 0.9, { producer: 'p' })).toBeUndefined();
    expect(alertFor(total, undefined, { producer: 'p' })).toBeUndefined();
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
  });
});

describe('windowTraces (marbles)', () => {
  const batch = (offset: number, ...traces: ReturnType<typeof trace>[]): EventBatch => ({
    topic: 'passk.traces',
    partition: 0,
    events: traces.map((event, i) => ({ topic: 'passk.traces', partition: 0, offset: offset + i, key: 'k', event })),
    lastOffset: offset + traces.length - 1,
    highWatermark: 99,
  });

  it('emits the shares each batch changed, and the close of a window when event time passes it', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const tables: WindowTables = new Map();
      const input = cold('a 59m b 1m c|', {
        a: batch(0, trace({ at: hour(1, 1), passed: true })),
        b: batch(1, trace({ at: hour(2, 5), passed: false })),
        c: batch(2, trace({ at: hour(2, 20), passed: true })),
      });
      const closedHourOne = (u: WindowShareRecord) => u.size_ms === H && u.start === hour(1) && u.closed;
      const out = input.pipe(windowTraces(tables, { ...o, producer: 'p', partitions: () => 4 }));
      expectObservable(
        out.pipe(
          map((f) => {
            const s = f.snapshots.get(0)!;
            return `${s.shares.length}:${s.shares.some(closedHourOne)}:${s.through_offset}`;
          }),
        ),
      ).toBe(
        'a 59m b 1m c|',
        // a: 1 tumbling + 4 sliding windows; b: 5 more (2 shared); c closes hour 1's tumbling window and the sliding one ending at hour 2
        { a: '5:false:1', b: '7:false:2', c: '7:true:3' },
      );
    });
  });
});
