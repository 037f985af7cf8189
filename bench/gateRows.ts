import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../log/index.ts';
import { partitionOf } from '../log/partitioner.ts';
import { emptyBook, foldBookInto, processorsFold, type GateBook } from '../processors/folds/gates.ts';
import { toRowStateChanged, type StreamRowState } from '../processors/folds/rowState.ts';
import { foldTrials } from '../processors/folds/rowTable.ts';
import { versionKeyOf } from '../processors/folds/versionSummary.ts';
import {
  applyRowstate,
  createGateStore,
  gateStep,
  type GateDecisionOptions,
  type GateStore,
} from '../processors/operators/decideGates.ts';
import { readToEnd } from '../processors/operators/readToEnd.ts';
import { readDecisionsByKey, readRowStates, restoreSnapshotsOnly } from '../processors/topologies/gates.ts';
import type { ComparisonDeclared } from '../schemas/events/comparisons.ts';
import type { GateEvaluated, RowStateChanged } from '../schemas/events/decisions.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { TOPICS } from '../schemas/topics.ts';
import { heapAfterGc as heap } from './heap.ts';
import { chunks } from './processors.ts';

/**
 * The gates' row tables after many closed comparisons (issue 26, item 6): K comparisons decided one a day, each
 * between two versions (v_k → v_k+1) of 50 rows × 3 attempts, then one open comparison (v_K → v_K+1, whose
 * candidate has not run yet), restored as the gates restore: the book (decided ids) and every row state of
 * passk.rowstate applied (`applyRowstate`, as the feed or the tail hands them over), then the restore's tick
 * (`gateStep`), which evicts what nothing pins (default `gateEvictIdleDays`, 7). Figures, each against the same
 * with K = 1 (about 1,000 decision events' worth: one closed comparison) in the same run:
 * - retained heap of a restored store (book, row tables, evicted keys), with eviction and without;
 * - restore time fed in process (applying the changelog, then the tick: `passk process`);
 * - restore time by key through an embedded log holding passk.rowstate, as a gates process that tails it restores
 *   with eviction on (`restoreSnapshotsOnly`: the topic's outline from the log's indexes without its versions, every
 *   version not loaded evicted without being named (`GateStore.outlined`), no row state decoded; the books, forgetting decided ids as the embedded log's gates do; the tick, which
 *   looks the open comparison up in passk.decisions by key (`readDecisionsByKey`) and whose reload of the pinned
 *   versions is `readRowStates`, a read of their keys by the index), and the retained heap of the store it restores;
 * - a reload alone: one key-filtered read of the whole of passk.rowstate for the open comparison's baseline.
 */
const T0 = Date.UTC(2024, 0, 1);
const DAY = 86_400_000;
const ROWS = 50;
const ATTEMPTS = 3;

const rowStatesOf = (versions: number): RowStateChanged[] => {
  const table = new Map<string, StreamRowState>();
  const out: RowStateChanged[] = [];
  for (let v = 0; v < versions; v++) {
    const trials: TrialRecorded[] = [];
    for (let r = 0; r < ROWS; r++)
      for (let a = 0; a < ATTEMPTS; a++) {
        const at = T0 + v * DAY + r * 10 + a;
        trials.push({
          event_id: deterministicEventId(at, 'trial', v, r, a),
          type: 'TrialRecorded',
          schema_version: 1,
          occurred_at: at,
          producer: 'bench',
          suite: 's',
          dataset_version: 'd1',
          row_id: `row-${r}`,
          run_id: `run-v${v}`,
          attempt: a,
          agent: { version: `v${v}` },
          passed: (v + r + a) % 7 !== 0,
          output: 'ok',
        });
      }
    for (const ch of foldTrials(table, trials)) out.push(toRowStateChanged(ch.after, 'bench'));
  }
  return out;
};

const declared = (k: number): ComparisonDeclared => ({
  event_id: deterministicEventId(T0 + k * DAY, 'ComparisonDeclared', k),
  type: 'ComparisonDeclared',
  schema_version: 1,
  occurred_at: T0 + (k + 1) * DAY,
  producer: 'bench',
  comparison_id: `gate-${k}`,
  suite: 's',
  dataset_version: 'd1',
  baseline: `v${k}`,
  candidate: `v${k + 1}`,
  confirmation_attempts: 0,
});

/**
 * The book a restore holds: K comparisons decided (to their ids, or to nothing when it forgets them, as the embedded
 * log's gates do: `forgetDecided`), one open.
 */
const bookOf = (closed: number, forget = false): GateBook => {
  const book = emptyBook();
  const fold = processorsFold(0, forget);
  for (let k = 0; k < closed; k++) {
    const d = declared(k);
    foldBookInto(book, d, fold);
    // only what the book folds of a verdict: its comparison, candidate and id
    const verdict = {
      ...d,
      event_id: deterministicEventId(d.occurred_at, 'GateEvaluated', k),
      type: 'GateEvaluated',
      gate_id: d.comparison_id,
    } as unknown as GateEvaluated;
    foldBookInto(book, verdict, fold);
  }
  foldBookInto(book, declared(closed), fold);
  return book;
};

interface Restored {
  /** Restore time, best of the runs. */
  readonly ms: number;
  /** Retained heap of one restored store (books and row tables), from `copies` held at once. */
  readonly bytes: number;
  readonly loaded: number;
  readonly evicted: number;
}

const restoreOne = async (book: GateBook, states: readonly RowStateChanged[], evict: boolean): Promise<GateStore> => {
  const o: GateDecisionOptions = {
    producer: 'bench',
    partitionOf,
    ...(evict
      ? {
          evict: { idleMs: 7 * DAY },
          reload: async (versions) => states.filter((e) => versions.has(versionKeyOf(e))),
        }
      : {}),
  };
  const store = createGateStore();
  store.decisionPartitions = 1;
  store.books.set(0, structuredClone(book));
  applyRowstate(store, states, { versions: new Set(), windows: new Set() });
  await gateStep(store, { source: 'tick' }, o);
  return store;
};

/**
 * Restores `runs` times for the time, then holds `copies` restored stores at once for the memory (the heap's noise,
 * about 100 KiB, would hide one small store).
 */
const restore = async (
  closed: number,
  states: readonly RowStateChanged[],
  evict: boolean,
  runs: number,
  copies: number,
): Promise<Restored> => {
  const book = bookOf(closed);
  let ms = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await restoreOne(book, states, evict);
    ms = Math.min(ms, performance.now() - started);
  }
  const before = heap();
  const held: GateStore[] = [];
  for (let i = 0; i < copies; i++) held.push(await restoreOne(book, states, evict));
  const bytes = (heap() - before) / copies;
  return { ms, bytes, loaded: held[0]!.rows.size, evicted: held[0]!.evicted.size };
};

interface FromLog {
  /** The restore by key (snapshots' read, books, tick with its reload), best of the runs. */
  readonly ms: number;
  /** One reload alone (the open comparison's baseline), best of the runs. */
  readonly reloadMs: number;
  /**
   * The restore a tailing gates process did before (and still does, eviction off): every row state read and decoded,
   * applied, then the tick (which evicts), best of the runs.
   */
  readonly wholeMs: number;
  readonly bytes: number;
  readonly loaded: number;
  readonly evicted: number;
  /** Of the restore by key, its first step alone (`restoreSnapshotsOnly`: the outline and the snapshots' read). */
  readonly snapshotsMs: number;
  /**
   * Of that step, the outline of passk.rowstate alone (the embedded log's `rowstateOutline`), as the restore reads it:
   * its ends and other keys, without the versions (no seek per version).
   */
  readonly outlineMs: number;
}

/** The restore by key through an embedded log holding `states` on passk.rowstate (see the header). */
const restoreFromLog = async (
  closed: number,
  states: readonly RowStateChanged[],
  runs: number,
  copies: number,
): Promise<FromLog> => {
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-gaterows-'));
  const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
  try {
    for (const part of chunks(states, 5_000)) await log.publisher.publish(part, { trusted: true });
    // the declarations on passk.decisions: the open comparison's look-up reads its candidate's records by key
    await log.publisher.publish(Array.from({ length: closed + 1 }, (_, k) => declared(k)));
    // as the embedded log's gates restore: the book forgets decided ids, and the tick looks the open one up
    const book = bookOf(closed, true);
    let reads = 0;
    const o: GateDecisionOptions = {
      producer: 'bench',
      partitionOf,
      evict: { idleMs: 7 * DAY },
      reload: (versions) => readRowStates(log, versions, `bench-gaterows-reload-${++reads}`),
      lookupDecided: (keys) => readDecisionsByKey(log, keys, `bench-gaterows-lookup-${++reads}`),
    };
    const restoreOne = async (): Promise<GateStore> => {
      const store = createGateStore({ forgetDecided: true });
      await restoreSnapshotsOnly(log, store, `bench-gaterows-restore-${++reads}`);
      store.decisionPartitions = 1;
      store.books.set(0, structuredClone(book));
      await gateStep(store, { source: 'tick' }, o);
      return store;
    };
    const restoreWhole = async (): Promise<void> => {
      const store = createGateStore({ forgetDecided: true });
      const none = { versions: new Set<string>(), windows: new Set<string>() };
      await readToEnd(log, {
        topic: TOPICS.rowstate,
        groupId: `bench-gaterows-whole-${++reads}`,
        onEvent: (e) => applyRowstate(store, [e], none),
      });
      store.decisionPartitions = 1;
      store.books.set(0, structuredClone(book));
      await gateStep(store, { source: 'tick' }, o);
    };
    const baseline = new Set([versionKeyOf({ suite: 's', dataset_version: 'd1', agent_version: `v${closed}` })]);
    let ms = Infinity;
    let reloadMs = Infinity;
    let wholeMs = Infinity;
    let snapshotsMs = Infinity;
    let outlineMs = Infinity;
    for (let i = 0; i < runs; i++) {
      let started = performance.now();
      // the whole read (seconds at K = 1,000) in the first runs only; the restore by key in every run
      if (i < 3) {
        await restoreWhole();
        wholeMs = Math.min(wholeMs, performance.now() - started);
      }
      started = performance.now();
      await restoreOne();
      ms = Math.min(ms, performance.now() - started);
      started = performance.now();
      const got = await readRowStates(log, baseline, `bench-gaterows-reload-${++reads}`);
      reloadMs = Math.min(reloadMs, performance.now() - started);
      if (got.length !== ROWS) throw new Error(`reloaded ${got.length} row states of v${closed}, not ${ROWS}`);
      started = performance.now();
      await restoreSnapshotsOnly(log, createGateStore(), `bench-gaterows-restore-${++reads}`);
      snapshotsMs = Math.min(snapshotsMs, performance.now() - started);
      started = performance.now();
      await log.rowstateOutline?.({ versions: false }); // as the restore reads it: no version
      outlineMs = Math.min(outlineMs, performance.now() - started);
    }
    const before = heap();
    const held: GateStore[] = [];
    for (let i = 0; i < copies; i++) held.push(await restoreOne());
    const bytes = (heap() - before) / copies;
    const [first] = held;
    return {
      ms,
      reloadMs,
      wholeMs,
      bytes,
      loaded: first!.rows.size,
      evicted: first!.evicted.size,
      snapshotsMs,
      outlineMs,
    };
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export interface GateRowsFigure {
  readonly closed: number;
  readonly rowStates: number;
  readonly evicting: Restored;
  readonly full: Restored;
  /** The same store with no row state: its book (decided ids) only, to tell the row tables' share. */
  readonly book: Restored;
  /** Restored by key through an embedded log (a gates process that tails passk.rowstate). */
  readonly fromLog: FromLog;
  readonly baseline: {
    readonly evicting: Restored;
    readonly full: Restored;
    readonly book: Restored;
    readonly fromLog: FromLog;
  };
}

export const benchGateRows = async (o: { readonly closed: readonly number[] }): Promise<GateRowsFigure[]> => {
  const baseStates = rowStatesOf(2); // K = 1: v0 → v1 decided, v1 → v2 open
  const baseline = {
    evicting: await restore(1, baseStates, true, 50, 100),
    full: await restore(1, baseStates, false, 50, 100),
    book: await restore(1, [], true, 1, 100),
    fromLog: await restoreFromLog(1, baseStates, 20, 100),
  };
  const out: GateRowsFigure[] = [];
  for (const closed of o.closed) {
    const states = rowStatesOf(closed + 1);
    out.push({
      closed,
      rowStates: states.length,
      evicting: await restore(closed, states, true, 5, 20),
      full: await restore(closed, states, false, 5, 3),
      book: await restore(closed, [], true, 1, 20),
      fromLog: await restoreFromLog(closed, states, 20, 20), // as many runs as the baseline's: best of 20 both
      baseline,
    });
  }
  return out;
};
