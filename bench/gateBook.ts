import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../log/index.ts';
import { readClosedRuns } from '../processors/topologies/gates.ts';
import { candidateKey } from '../schemas/topics.ts';
import {
  emptyBook,
  EVICT_DECIDED,
  foldBookInto,
  processorsFold as processorsFoldOptions,
  type DecisionEvent,
  type GateBook,
} from '../processors/folds/gates.ts';
import type { ComparisonDeclared, ConfirmationRequested, RunClosed } from '../schemas/events/comparisons.ts';
import type { GateBookSnapshot } from '../schemas/events/gateBookSnapshot.ts';
import type { GateEvaluated } from '../schemas/events/decisions.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import {
  emptyPrefix,
  evictPrefixClosed,
  foldPrefix,
  restorePrefix,
  toGateBookSnapshot,
  type DecisionsPrefix,
} from '../processors/folds/gateSnapshot.ts';
import { jsonCodec } from '../schemas/codec.ts';
import { fastJsonCodec } from '../log/fastValidate.ts';
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
/** The envelope of a bench event at `at` (epoch ms), its id from its type and parts. */
export const envelopeAt = <T extends string>(type: T, at: number, ...parts: (string | number)[]) => ({
  event_id: deterministicEventId(at, type, ...parts),
  type,
  schema_version: 1,
  occurred_at: at,
  producer: 'bench',
});
const envelope = <T extends string>(type: T, i: number, ...parts: (string | number)[]) =>
  envelopeAt(type, T0 + i, ...parts);

const POOL = 10_000;
/** The i-th closed run of the gatebook stream: run ids repeat every POOL runs, agent versions every 50. */
export const closedRunAt = (i: number): RunClosed => ({
  ...envelope('RunClosed', i, 'run', i),
  run_id: `run-${i % POOL}`,
  suite: 's',
  dataset_version: 'd1',
  agent_version: `v${i % 50}`,
  status: 'completed',
  trials: 300,
  source_event_id: deterministicEventId(T0 + i, 'RunFinished', i),
});
const closedPool: RunClosed[] = Array.from({ length: POOL }, (_, i) => closedRunAt(i));

/** The k-th comparison's three events, declared at `at` (the request and verdict 1 and 2 ms later). */
export const comparisonAt = (k: number, at: number): [ComparisonDeclared, ConfirmationRequested, GateEvaluated] => {
  const id = `gate-${k}`;
  const scope = { suite: 's', dataset_version: `d${k}`, baseline: `v${k}`, candidate: `v${k + 1}` };
  return [
    { ...envelopeAt('ComparisonDeclared', at, id), comparison_id: id, dataset_id: 's', ...scope },
    {
      ...envelopeAt('ConfirmationRequested', at + 1, id),
      comparison_id: id,
      ...scope,
      rows: ['r1', 'r2'],
      attempts: 3,
      run_id: `confirm-${id}`,
      reason: 'bench',
    },
    {
      ...envelopeAt('GateEvaluated', at + 2, id),
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

/** The k-th comparison's three events. */
const comparison = (k: number) => comparisonAt(k, T0 + k);

const DAY = 86_400_000;
/** The k-th comparison of the dated stream (one declared a day: 1M events are 1,000 days), for the ids horizon. */
const dailyComparison = (k: number) => comparisonAt(k, T0 + k * DAY);

/** The stream's comparisons, built before anything is timed (building them is not the fold's cost). */
const built: [ComparisonDeclared, ConfirmationRequested, GateEvaluated][] = [];
const builtDaily: typeof built = [];
const comparisonsFor = (events: number) => {
  while (built.length < Math.ceil(events / 1_000)) built.push(comparison(built.length));
  while (builtDaily.length < Math.ceil(events / 1_000)) builtDaily.push(dailyComparison(builtDaily.length));
  return built;
};

/** The processors' fold: decided comparisons evicted to their ids. */
const processorsFold = (b: GateBook, e: DecisionEvent): boolean => foldBookInto(b, e, EVICT_DECIDED);

/** The embedded log's processors' fold: decided comparisons evicted and their ids forgotten (looked up in the log). */
const forgetting = processorsFoldOptions(0, true);
const forgettingFold = (b: GateBook, e: DecisionEvent): boolean => foldBookInto(b, e, forgetting);

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
  /** The same, the book forgetting decided ids (the embedded log's gates: `forgetDecided`). */
  readonly forgetBytes: number;
  readonly forgetBaselineBytes: number;
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
const retained = (events: number, visit = processorsFold): number => {
  const copies = Math.max(2, Math.ceil(2_000_000 / events));
  const before = heap();
  const books = Array.from({ length: copies }, () => fold(events, true, visit));
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
      forgetBytes: retained(events, forgettingFold),
      forgetBaselineBytes: retained(1_000, forgettingFold),
    };
  });
}

/** The k-th event of the stream (as `fold` folds them; `fresh`: its comparison built anew, as a decode makes it). */
const eventAt = (
  i: number,
  fresh: boolean,
  current: { k: number; c: ReturnType<typeof comparison> },
  daily = false,
): DecisionEvent => {
  const slot = i % 1_000;
  const k = Math.floor(i / 1_000);
  const comparisons = daily ? builtDaily : built;
  if (current.k !== k) current.c = fresh ? (daily ? dailyComparison : comparison)(k) : comparisons[k]!;
  current.k = k;
  if (slot < 3) return current.c[slot]!;
  if (slot < 103) return comparisons[i % (k + 1)]![2];
  return closedPool[i % POOL]!;
};

/**
 * The stream's records `from` ≤ offset < `to` folded into a prefix, in batches of 1,000 (as the consumer hands them);
 * `daily`: the dated stream (one comparison declared a day).
 */
const foldRecords = (s: DecisionsPrefix, from: number, to: number, fresh = false, daily = false): DecisionsPrefix => {
  const current = { k: -1, c: built[0]! };
  for (let start = from; start < to; start += 1_000) {
    const batch: { offset: number; event: DecisionEvent }[] = [];
    for (let i = start; i < Math.min(to, start + 1_000); i++)
      batch.push({ offset: i, event: eventAt(i, fresh, current, daily) });
    foldPrefix(s, batch, batch.at(-1)!.offset);
  }
  return s;
};

export interface GateRestoreLine {
  readonly events: number;
  readonly comparisons: number;
  /** Records after the snapshot a restore folds (0: after a clean stop; up to the snapshot period after a crash). */
  readonly tail: number;
  /** Bytes of the snapshot on the log. */
  readonly snapshotBytes: number;
  /** Milliseconds of a restore: the snapshot decoded (JSON, validated as the logs validate) and restored, the tail folded. */
  readonly restoreMs: number;
  /** The same restore of the stream's first 1,000 events (a snapshot at its end, no tail). */
  readonly baselineRestoreMs: number;
  /** Both timed in alternating rounds: the medians and the spread of the rounds' ratios. */
  readonly paired: Paired;
  /** After a clean stop, the same against the bench's first size (e.g. 100,000 events), timed the same way. */
  readonly againstFirst?: Paired & { readonly events: number; readonly snapshotBytes: number };
  /** Milliseconds of a replay from offset 0 (what a restore did before snapshots; events already decoded). */
  readonly replayMs: number;
  /** Retained bytes of the restored prefix (book and closed runs), and of the 1,000-event one. */
  readonly bytes: number;
  readonly baselineBytes: number;
  /** Of which the book alone (its decided ids and verdict ids), and the 1,000-event book. */
  readonly bookBytes: number;
  readonly baselineBookBytes: number;
}

/** Best of 5: milliseconds of `run`, repeated `repeats` times. */
const bestMs = (run: () => unknown, repeats: number): number => {
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let r = 0; r < repeats; r++) run();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6 / repeats);
  }
  return best;
};

/**
 * Retained bytes of `make()`'s result: the heap after a full collection with `copies` of it kept at once, less the
 * heap before them, per copy. `approxBytes` (about one copy's size, e.g. its JSON) raises `copies` until they hold at
 * least 16 MiB in all: the heap moves by ±100 KiB between two collections, so 50 copies of a 1 KiB book read as noise
 * (a negative figure) where 16,000 of them do not.
 */
export const retainedOf = (make: () => unknown, copies: number, approxBytes?: number): number => {
  const n = approxBytes
    ? Math.min(50_000, Math.max(copies, Math.ceil((16 << 20) / Math.max(64, approxBytes))))
    : copies;
  const before = heap();
  const kept = Array.from({ length: n }, make);
  const bytes = (heap() - before) / n;
  if (kept.length < 0) throw new Error('unreachable: keeps them alive');
  return bytes;
};

/** Best of 5 of `bestMs` for an async `run`: decode is async only in name (no I/O), so timed through awaits. */
export const asyncBestMs = async (run: () => Promise<unknown>, repeats: number): Promise<number> => {
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let r = 0; r < repeats; r++) await run();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6 / repeats);
  }
  return best;
};

/** A run timed against its baseline (`pairedMs`): medians over the rounds, and the spread of the rounds' ratios. */
export interface Paired {
  /** Median over the rounds of the run's mean ms, and of the baseline's. */
  readonly ms: number;
  readonly baselineMs: number;
  /** Median of the rounds' ratios (run / baseline, each pair timed back to back), and their quartiles. */
  readonly ratio: number;
  readonly ratioLow: number;
  readonly ratioHigh: number;
  readonly rounds: number;
}

const quantile = (xs: readonly number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

/**
 * `run` against `baseline`, timed in alternating rounds (run then baseline, then baseline then run, ...), each round
 * about `roundMs` of repeats of one of them (at least 3; a restore of 10 µs is 2,000 repeats): the same heap, JIT state
 * and machine load for both, where a baseline timed once before the rest (best of 5, as until 2026-12-07) met another
 * process state than a run timed minutes later (ratios of 1.7–2.6× between runs of the bench for the same code).
 * Medians, not bests: a round a GC or another process hit counts as one round of `rounds`.
 */
export const pairedMs = async (
  run: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  o: { readonly rounds?: number; readonly roundMs?: number } = {},
): Promise<Paired> => {
  const rounds = o.rounds ?? 31;
  const roundMs = o.roundMs ?? 20;
  const timed = async (f: () => Promise<unknown>, repeats: number): Promise<number> => {
    const started = process.hrtime.bigint();
    for (let r = 0; r < repeats; r++) await f();
    return Number(process.hrtime.bigint() - started) / 1e6 / repeats;
  };
  const repeatsOf = async (f: () => Promise<unknown>): Promise<number> => {
    await timed(f, 3); // warm-up
    const once = Math.min(await timed(f, 1), await timed(f, 1), await timed(f, 1));
    return Math.max(3, Math.min(20_000, Math.ceil(roundMs / Math.max(once, 1e-4))));
  };
  const [runRepeats, baseRepeats] = [await repeatsOf(run), await repeatsOf(baseline)];
  const ms: number[] = [];
  const base: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let a: number;
    let b: number;
    if (i % 2 === 0) {
      a = await timed(run, runRepeats);
      b = await timed(baseline, baseRepeats);
    } else {
      b = await timed(baseline, baseRepeats);
      a = await timed(run, runRepeats);
    }
    ms.push(a);
    base.push(b);
    ratios.push(a / b);
  }
  return {
    ms: quantile(ms, 0.5),
    baselineMs: quantile(base, 0.5),
    ratio: quantile(ratios, 0.5),
    ratioLow: quantile(ratios, 0.25),
    ratioHigh: quantile(ratios, 0.75),
    rounds,
  };
};

/**
 * Issue 26, item 6: a restore from a partition's latest snapshot (written at a clean stop, or `snapshotEvery`
 * records before a crash) against the same after 1,000 events; memory of what it restores (the book and the closed
 * runs, which the gates need whichever partition holds them) against the 1,000-event one.
 */
export async function benchGateRestore(o: {
  events: readonly number[];
  tails: readonly number[];
  /**
   * The gates evict closed runs with their versions (`evictClosed`): at the snapshot, every key no open comparison
   * names is left out (here all of them: every comparison is decided), and so is every later run of it.
   */
  evictClosed?: boolean;
  /**
   * The book forgets decided ids (`forgetDecided`: the embedded log's gates without a horizon, which look them up in
   * passk.decisions by key before deciding): the snapshot and the restore hold no decided id and no verdict id.
   */
  forget?: boolean;
  /**
   * The book keeps decided ids under the ids horizon of this many days (`idHorizonMs`: Kafka's gates as shipped, 7),
   * on the dated stream: one comparison declared a day (so 1M events are 1,000 days; the closed runs' times are not
   * read), its confirmation and verdict 1 and 2 ms later.
   */
  idHorizonDays?: number;
}): Promise<GateRestoreLine[]> {
  const forget = o.forget ?? false;
  const idH = Math.round((o.idHorizonDays ?? 0) * DAY);
  const daily = idH > 0;
  comparisonsFor(Math.max(...o.events) + Math.max(...o.tails));
  const evicted = (s: DecisionsPrefix): DecisionsPrefix => {
    if (!o.evictClosed) return s;
    const named = new Set<string>();
    for (const c of Object.values(s.book.comparisons))
      for (const v of [c.declared.baseline, c.declared.candidate]) named.add(candidateKey(c.declared.suite, v));
    const keys = new Set([...s.closed.values()].map((r) => candidateKey(r.suite, r.agent_version)));
    evictPrefixClosed(
      s,
      [...keys].filter((k) => !named.has(k)),
    );
    return s;
  };
  const snapshotOf = async (events: number) =>
    jsonCodec.encode(
      toGateBookSnapshot(evicted(foldRecords(emptyPrefix(0, forget, idH), 0, events, false, daily)), 0, 1, 'bench'),
    );
  const restore = async (bytes: Uint8Array, from: number, tail: number): Promise<DecisionsPrefix> => {
    // decoded as both logs decode a record (`validateDecoded`: the compiled closed schema, zod only for a record it
    // refuses); until 2026-12-07 this bench decoded with zod (`jsonCodec`), which no restore uses
    const snapshot = await fastJsonCodec.decode(bytes);
    if (snapshot.type !== 'GateBookSnapshot') throw new Error(snapshot.type);
    return foldRecords(restorePrefix(snapshot, 0, forget, idH), from, from + tail, false, daily);
  };
  const base = await snapshotOf(1_000);
  const baseRestored = await restore(base, 1_000, 0);
  const copies = 50;
  const baseDecoded = JSON.stringify(toGateBookSnapshot(baseRestored, 0, 1, 'b'));
  const baselineBytes = retainedOf(
    () => restorePrefix(JSON.parse(baseDecoded) as GateBookSnapshot, 0, forget, idH),
    copies,
    baseDecoded.length,
  );
  const baselineBookBytes = retainedOf(
    () => structuredClone(baseRestored.book),
    copies,
    JSON.stringify(baseRestored.book).length,
  );
  const out: GateRestoreLine[] = [];
  let first: { events: number; bytes: Uint8Array } | undefined;
  for (const events of o.events) {
    const bytes = await snapshotOf(events);
    first ??= { events, bytes };
    const firstOnes = first;
    const replayMs = bestMs(() => foldRecords(emptyPrefix(0, forget, idH), 0, events, false, daily), 1);
    for (const tail of o.tails) {
      // timed in rounds alternating with the 1,000-event restore (`pairedMs`)
      const paired = await pairedMs(
        () => restore(bytes, events, tail),
        () => restore(base, 1_000, 0),
      );
      // after a clean stop, also against the first size's restore (its history already past the ids horizon: the
      // same window of comparisons, where the 1,000-event book holds one comparison's ids)
      const againstFirst =
        tail === 0 && events !== firstOnes.events
          ? await pairedMs(
              () => restore(bytes, events, 0),
              () => restore(firstOnes.bytes, firstOnes.events, 0),
            )
          : undefined;
      const restored = await restore(bytes, events, tail);
      const decoded = JSON.stringify(toGateBookSnapshot(restored, 0, 1, 'b'));
      out.push({
        events,
        comparisons: Math.ceil(events / 1_000),
        tail,
        snapshotBytes: bytes.byteLength,
        restoreMs: paired.ms,
        baselineRestoreMs: paired.baselineMs,
        paired,
        ...(againstFirst && {
          againstFirst: { events: firstOnes.events, snapshotBytes: firstOnes.bytes.byteLength, ...againstFirst },
        }),
        replayMs,
        bytes: retainedOf(
          () => restorePrefix(JSON.parse(decoded) as GateBookSnapshot, 0, forget, idH),
          Math.max(2, Math.round(copies / 10)),
          decoded.length,
        ),
        baselineBytes,
        bookBytes: retainedOf(
          () => structuredClone(restored.book),
          Math.max(2, Math.round(copies / 10)),
          JSON.stringify(restored.book).length,
        ),
        baselineBookBytes,
      });
    }
  }
  return out;
}

export interface ClosedReloadLine {
  readonly events: number;
  /** Milliseconds of one reload of a key's closed runs (`readClosedRuns`: every key of passk.decisions read). */
  readonly ms: number;
  /** The runs it brought back. */
  readonly runs: number;
}

/**
 * What bringing an evicted key's closed runs back costs (docs/processors.md, "Evicting versions from the row
 * tables"): the stream above written to passk.decisions of an embedded log (one partition, as a bench's worst case:
 * every record is scanned), then one key's RunClosed read again as the gates' reload reads them. Best of `runs`.
 */
export async function benchClosedReload(o: { events: readonly number[]; runs: number }): Promise<ClosedReloadLine[]> {
  comparisonsFor(Math.max(...o.events));
  const out: ClosedReloadLine[] = [];
  for (const events of o.events) {
    const dir = mkdtempSync(join(tmpdir(), 'passk-bench-closedreload-'));
    const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL', partitions: 1 });
    try {
      const current = { k: -1, c: built[0]! };
      for (let start = 0; start < events; start += 5_000) {
        const part: DecisionEvent[] = [];
        for (let i = start; i < Math.min(events, start + 5_000); i++) part.push(eventAt(i, false, current));
        await log.publisher.publish(part, { trusted: true });
      }
      const keys = new Set([candidateKey('s', 'v7')]);
      let ms = Infinity;
      let runs = 0;
      for (let r = 0; r < o.runs; r++) {
        const started = performance.now();
        runs = (await readClosedRuns(log, keys, `bench-closedreload-${events}-${r}`)).length;
        ms = Math.min(ms, performance.now() - started);
      }
      out.push({ events, ms, runs });
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}
