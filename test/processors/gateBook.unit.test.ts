import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyBook,
  EVICT_DECIDED,
  evolveBook,
  foldBookInto,
  type DecisionEvent,
  type GateBook,
} from '../../processors/folds/gates.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { comparison } from '../helpers/feedbackLoop.ts';

/**
 * Issue 26, item 6 (part): the gate book keeps no list of every event id seen and copies nothing per event.
 * Every decision event is idempotent by its own key, so a stream with redeliveries in any order folds to the
 * book of its first deliveries, and the book's size depends on the comparisons, verdicts and alerts it holds,
 * never on how many events (closed runs, redeliveries) were folded.
 */
const T = Date.UTC(2026, 0, 1);
const env = (type: string, ...parts: (string | number)[]) => ({
  event_id: deterministicEventId(T, type, ...parts),
  schema_version: 1,
  occurred_at: T,
  producer: 'p',
});
const universe = (k: number): DecisionEvent[] => {
  const id = `c${k}`;
  const scope = { suite: 'refunds', dataset_version: 'd1', baseline: 'base', candidate: `cand${k % 3}` };
  return [
    comparison(id, 'd1', 'base', scope.candidate),
    {
      ...env('ConfirmationRequested', id),
      type: 'ConfirmationRequested',
      comparison_id: id,
      ...scope,
      rows: ['r1'],
      attempts: 3,
      run_id: `confirm-${id}`,
      reason: 'x',
    },
    {
      ...env('GateEvaluated', id),
      type: 'GateEvaluated',
      schema_version: 2,
      gate_id: id,
      ...scope,
      verdict: 'pass',
      reasons: [],
      evidence: [],
      must_not_break: [],
    },
    {
      ...env('RunClosed', id),
      type: 'RunClosed',
      run_id: `run-${k}`,
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: scope.candidate,
      status: 'completed',
      trials: 3,
      source_event_id: 'x',
    },
    {
      ...env('WindowAlertRaised', k % 2),
      type: 'WindowAlertRaised',
      alert_id: `alert-${k % 2}`,
      agent_version: 'v',
      segment: 's',
      grader: 'g',
      window: '1h',
      window_start: T,
      window_end: T + 3_600_000,
      production_pass_rate: 0.5,
      offline_pass_at_1: 0.9,
      delta: -0.4,
      threshold: 0.1,
      n: 100,
    } as unknown as DecisionEvent,
  ];
};
const foldAll = (events: readonly DecisionEvent[]) => {
  const book = emptyBook();
  for (const e of events) foldBookInto(book, e);
  return book;
};

describe('the gate book', () => {
  it('folds a stream with redeliveries anywhere to the book of its first deliveries', () => {
    // first deliveries keep each comparison's order (one key, one partition: its declaration comes first);
    // redeliveries of anything delivered before come at any point
    const step = fc.tuple(fc.nat(3), fc.boolean(), fc.nat(1_000));
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 80 }), (steps) => {
        const next = [0, 0, 0, 0];
        const delivered: DecisionEvent[] = [];
        const stream: DecisionEvent[] = [];
        for (const [k, again, j] of steps) {
          if (again && delivered.length > 0) stream.push(delivered[j % delivered.length]!);
          else if (next[k]! < 5) {
            const e = universe(k)[next[k]!++]!;
            delivered.push(e);
            stream.push(e);
          }
        }
        expect(foldAll(stream)).toEqual(foldAll(delivered));
        // the pure form agrees with the in-place one, and returns the book itself for a redelivery
        const pure = stream.reduce(evolveBook, emptyBook());
        expect(pure).toEqual(foldAll(stream));
        for (const e of delivered) expect(evolveBook(pure, e)).toBe(pure);
      }),
      { numRuns: 300 },
    );
  });

  it('evicts a decided comparison to its id, and decides and ignores what the full book does', () => {
    // any order of deliveries and redeliveries, re-declarations after the verdict included
    const step = fc.tuple(fc.nat(3), fc.nat(4), fc.boolean());
    const evicting = (events: readonly DecisionEvent[]) => {
      const book = emptyBook();
      for (const e of events) foldBookInto(book, e, EVICT_DECIDED);
      return book;
    };
    const decidedIds = (b: GateBook) =>
      Object.entries(b.comparisons)
        .filter(([, c]) => c.status === 'decided')
        .map(([id]) => id)
        .sort();
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const stream = steps.map(([k, i]) => universe(k)[i]!);
        const full = foldAll(stream);
        const kept = evicting(stream);
        expect(Object.keys(kept.decided ?? {}).sort()).toEqual(decidedIds(full));
        // what is not decided is kept whole; verdicts, alerts and adaptive runs as in the full book
        const open = Object.fromEntries(Object.entries(full.comparisons).filter(([, c]) => c.status !== 'decided'));
        expect(kept.comparisons).toEqual(open);
        expect({ ...kept, comparisons: {}, decided: undefined }).toEqual({ ...full, comparisons: {} });
        // each event changes the evicting book exactly when it changes the full one
        const a = emptyBook();
        const b = emptyBook();
        for (const e of stream) expect(foldBookInto(a, e, EVICT_DECIDED)).toBe(foldBookInto(b, e));
      }),
      { numRuns: 300 },
    );
    // a re-declaration of a decided id is ignored, and nothing of the verdict is kept
    const book = emptyBook();
    for (const e of universe(1).slice(0, 3)) foldBookInto(book, e, EVICT_DECIDED);
    expect(book.comparisons).toEqual({});
    expect(book.decided).toEqual({ c1: true });
    expect(foldBookInto(book, comparison('c1', 'd2', 'base', 'other'), EVICT_DECIDED)).toBe(false);
    expect(book.comparisons).toEqual({});
  });

  it('does not grow with the events folded: 100k closed runs and redeliveries leave it as its comparisons make it', () => {
    const decided = Array.from({ length: 200 }, (_, k) => universe(k));
    const distinct = foldAll(decided.flat());
    const book = foldAll(decided.flat());
    for (let i = 0; i < 100_000; i++) foldBookInto(book, decided[i % 200]![i % 5]!);
    expect(JSON.stringify(book).length).toBe(JSON.stringify(distinct).length);
    expect(book).toEqual(distinct);
  });
});
