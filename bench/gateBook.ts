import {
  emptyBook,
  EVICT_DECIDED,
  foldBookInto,
  type DecisionEvent,
  type GateBook,
} from '../processors/folds/gates.ts';
import type { ComparisonDeclared, ConfirmationRequested, RunClosed } from '../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../schemas/events/decisions.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { heapAfterGc as heap } from './heap.ts';

/**
 * The gate book's cost as passk.decisions grows (issue 26, item 6): a restore replays the owned
 * partitions, so it folds every decision event ever published. The stream: per 1,000 events one
 * comparison declared, a confirmation asked, its verdict, 100 redeliveries of verdicts, and closed
 * runs; 1M events hold 1,000 decided comparisons. Figures, each against the same fold of the stream's
 * first 1,000 events (one comparison) in the same run, folded as the processors fold (decided comparisons evicted
 * to their ids, `EVICT_DECIDED`):
 * - fold time per event (the restore's cost per event: flat means no event costs more for those before it);
 * - retained heap of the book after a full GC (what stays in memory while the processor runs).
 */

const T0 = Date.UTC(2026, 0, 1);
const envelope = <T extends string>(type: T, i: number, ...parts: (string | number)[]) => ({
  event_id: deterministicEventId(T0 + i, type, ...parts),
  type,
  schema_version: 1,
  occurred_at: T0 + i,
  producer: 'bench',
});

const POOL = 10_000;
const closedPool: RunClosed[] = Array.from({ length: POOL }, (_, i) => ({
  ...envelope('RunClosed', i, 'run', i),
  run_id: `run-${i}`,
  suite: 's',
  dataset_version: 'd1',
  agent_version: `v${i % 50}`,
  status: 'completed',
  trials: 300,
  source_event_id: deterministicEventId(T0 + i, 'RunFinished', i),
}));

/** The k-th comparison's three events. */
const comparison = (k: number): [ComparisonDeclared, ConfirmationRequested, GateEvaluated] => {
  const id = `gate-${k}`;
  const scope = { suite: 's', dataset_version: `d${k}`, baseline: `v${k}`, candidate: `v${k + 1}` };
  return [
    { ...envelope('ComparisonDeclared', k, id), comparison_id: id, dataset_id: 's', ...scope },
    {
      ...envelope('ConfirmationRequested', k, id),
      comparison_id: id,
      ...scope,
      rows: ['r1', 'r2'],
      attempts: 3,
      run_id: `confirm-${id}`,
      reason: 'bench',
    },
    {
      ...envelope('GateEvaluated', k, id),
      schema_version: 2,
      gate_id: id,
      ...scope,
      verdict: 'pass',
      reasons: [{ rule: 'must_not_break_stable_correct', passed: true, detail: 'bench', rows: [] }],
      evidence: Array.from({ length: 50 }, (_, r) => ({
        row_id: `r${r}`,
        baseline_attempts: [deterministicEventId(T0 + r, 'b', k)],
        candidate_attempts: [deterministicEventId(T0 + r, 'c', k)],
      })),
      must_not_break: [],
    },
  ];
};

/** The stream's comparisons, built before anything is timed (building them is not the fold's cost). */
const built: [ComparisonDeclared, ConfirmationRequested, GateEvaluated][] = [];
const comparisonsFor = (events: number) => {
  while (built.length < Math.ceil(events / 1_000)) built.push(comparison(built.length));
  return built;
};

/** The processors' fold: decided comparisons evicted to their ids. */
const processorsFold = (b: GateBook, e: DecisionEvent): boolean => foldBookInto(b, e, EVICT_DECIDED);

/**
 * Folds the stream's first `events` events into a new book: its comparisons built before (timing), or
 * anew, as a restore decodes them (memory: the book then holds the only reference to them).
 */
const fold = (events: number, fresh = false, visit = processorsFold): GateBook => {
  const book = emptyBook();
  let current = built[0]!;
  for (let i = 0; i < events; i++) {
    const slot = i % 1_000;
    const k = Math.floor(i / 1_000);
    if (slot === 0) current = fresh ? comparison(k) : built[k]!;
    let e: DecisionEvent;
    if (slot < 3) e = current[slot]!;
    else if (slot < 103)
      e = built[i % (k + 1)]![2]; // a verdict delivered again
    else e = closedPool[i % POOL]!;
    visit(book, e);
  }
  return book;
};

export interface GateBookLine {
  readonly events: number;
  readonly comparisons: number;
  /** Nanoseconds per event folded, and the same for the stream's first 1,000 events. */
  readonly nsPerEvent: number;
  readonly baselineNsPerEvent: number;
  /** Nanoseconds per event of only looking at each event of the same stream. */
  readonly touchNsPerEvent: number;
  /** Retained bytes of the book, and of the book after the first 1,000 events. */
  readonly bytes: number;
  readonly baselineBytes: number;
}

/** The tight baseline: the same stream, each event only looked at (its type's length summed). */
let touched = 0;
const touch = (_: GateBook, e: DecisionEvent): boolean => ((touched += e.type.length), false);

/** Best of three: nanoseconds per event over `repeats` folds of `events` events. */
const timed = (events: number, repeats: number, visit = processorsFold): number => {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = process.hrtime.bigint();
    for (let r = 0; r < repeats; r++) fold(events, false, visit);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / (events * repeats));
  }
  return best;
};

/**
 * Retained bytes of one book folded from `events` events: enough books are kept at once (about 2M events folded in
 * all) that the heap's noise of ±100 KiB does not hide a book of a few KiB, as it did with one.
 */
const retained = (events: number): number => {
  const copies = Math.max(2, Math.ceil(2_000_000 / events));
  const before = heap();
  const books = Array.from({ length: copies }, () => fold(events, true));
  const bytes = (heap() - before) / copies;
  if (books.length < 0 || touched < 0) throw new Error('unreachable: keeps them alive');
  return bytes;
};

export function benchGateBook(o: { events: readonly number[] }): GateBookLine[] {
  comparisonsFor(Math.max(...o.events));
  timed(1_000, 200); // warm-up
  return o.events.map((events) => {
    const baselineNsPerEvent = timed(1_000, Math.max(1, Math.round(events / 1_000))); // as many events in all
    const nsPerEvent = timed(events, 1);
    const touchNsPerEvent = timed(events, 1, touch);
    return {
      events,
      comparisons: Math.ceil(events / 1_000),
      nsPerEvent,
      baselineNsPerEvent,
      touchNsPerEvent,
      bytes: retained(events),
      baselineBytes: retained(1_000),
    };
  });
}
