import { map, type OperatorFunction } from 'rxjs';
import type { ConfirmationRequested, RunClosed } from '../../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import type { WindowAlertRaised } from '../../schemas/events/windowAlertRaised.ts';
import { candidateKey, TOPICS, windowAlertKey } from '../../schemas/topics.ts';
import { evolveDataset, type DatasetState } from '../core/datasets.ts';
import {
  decideComparison,
  emptyBook,
  foldBookInto,
  isDecision,
  pastHorizon,
  processorsFold,
  pruneBook,
  type GateBook,
  type GateView,
} from '../folds/gates.ts';
import {
  chunkSnapshot,
  emptyShelf,
  foldPrefix,
  nextSlot,
  PRUNE_EVERY,
  shelve,
  toGateBookSnapshot,
  type DecisionsPrefix,
  type SnapshotShelf,
} from '../folds/gateSnapshot.ts';
import { fromRowStateChanged, type StreamRowState } from '../folds/rowState.ts';
import type { RestoredStates } from './rowstateFeed.ts';
import { versionKeyOf } from '../folds/versionSummary.ts';
import { alertFor, totalOf, windowKeyOf, type AlertOptions, type WindowTotal } from '../folds/windowTotals.ts';
import type { EventBatch } from '../ports.ts';
import { weightOf, type Position } from './foldUnits.ts';
import { pushAll } from '../core/arrays.ts';

/**
 * What the gates see: their own books (owned partitions of passk.decisions) and three global tables,
 * every row state by version, every dataset, and every closed run (all partitions of passk.decisions).
 */
export interface GateStore {
  readonly books: Map<number, GateBook>;
  /** Owned partitions of passk.decisions folded from the log alone: what their snapshots hold (gateSnapshot.ts). */
  readonly prefixes: Map<number, DecisionsPrefix>;
  /** The latest complete snapshot of each partition of passk.decisions seen on passk.rowstate (every partition). */
  readonly bookSnapshots: Map<number, GateBookSnapshot>;
  /** What `bookSnapshots` is read from: whole snapshots and chunks, joined once complete (`bookSnapshots` is its `latest`). */
  readonly bookShelf: SnapshotShelf;
  readonly rows: Map<string, Map<string, StreamRowState>>;
  readonly datasets: Map<string, DatasetState>;
  /** suite␟agent version → its RunClosed by event id. */
  readonly closed: Map<string, Map<string, RunClosed>>;
  /** Production windows: source partition of passk.traces → its latest snapshot. */
  readonly snapshots: Map<number, TraceWindowsUpdated>;
  /** Partitions of passk.decisions (known once assigned): who owns a window's alerts. */
  decisionPartitions: number;
  /** The horizon of the books and the closed runs, in ms of event time (0: none). */
  readonly horizonMs: number;
  /**
   * The clock of the closed runs: the latest RunClosed's event time on any partition (a partition's own clock,
   * `DecisionsPrefix.closedAt`, is never later). A closed run older than it by the horizon is not seen, nor kept.
   */
  closedAt: number;
  /** Decision records applied since the books and closed runs were last pruned (`PRUNE_EVERY`). */
  unpruned: number;
  readonly view: GateView;
}

export const createGateStore = (o: { readonly horizonMs?: number } = {}): GateStore => {
  const rows = new Map<string, Map<string, StreamRowState>>();
  const datasets = new Map<string, DatasetState>();
  const closed = new Map<string, Map<string, RunClosed>>();
  const none = new Map<string, StreamRowState>();
  const horizonMs = o.horizonMs ?? 0;
  const bookShelf = emptyShelf();
  const store: GateStore = {
    books: new Map(),
    prefixes: new Map(),
    bookSnapshots: bookShelf.latest,
    bookShelf,
    rows,
    datasets,
    closed,
    snapshots: new Map(),
    decisionPartitions: 0,
    horizonMs,
    closedAt: 0,
    unpruned: 0,
    view: {
      rows: (suite, dataset_version, agent_version) =>
        rows.get(versionKeyOf({ suite, dataset_version, agent_version })) ?? none,
      dataset: (id) => datasets.get(id),
      closed: (suite, agent_version) =>
        [...(closed.get(candidateKey(suite, agent_version))?.values() ?? [])].filter(
          (r) => !pastHorizon(store.closedAt, r.occurred_at, horizonMs),
        ),
    },
  };
  return store;
};

/** Adds a closed run to the store's global table (one older than the horizon is not kept). */
export const addClosed = (store: GateStore, run: RunClosed): void => {
  store.closedAt = Math.max(store.closedAt, run.occurred_at);
  if (pastHorizon(store.closedAt, run.occurred_at, store.horizonMs)) return;
  const key = candidateKey(run.suite, run.agent_version);
  let runs = store.closed.get(key);
  if (!runs) store.closed.set(key, (runs = new Map()));
  runs.set(run.event_id, run);
};

/** Drops what lies past the horizon from the live books and the closed runs (memory only: reads hide it already). */
export const pruneStore = (store: GateStore): void => {
  store.unpruned = 0;
  for (const book of store.books.values()) pruneBook(book, store.horizonMs);
  if (store.horizonMs <= 0) return;
  for (const [key, runs] of store.closed) {
    for (const [id, run] of runs) if (pastHorizon(store.closedAt, run.occurred_at, store.horizonMs)) runs.delete(id);
    if (runs.size === 0) store.closed.delete(key);
  }
};

/**
 * An input batch, or a tick: decide again without new input (after a restore). `decisions` is the
 * owned partitions (books, commits); `closed` is the whole topic, followed for its RunClosed.
 */
export type GateInput =
  | { readonly source: 'decisions' | 'closed' | 'rowstate' | 'datasets'; readonly batch: EventBatch }
  | { readonly source: 'tick' }
  /** A clean stop: snapshot every owned partition folded since its last snapshot. */
  | { readonly source: 'final' }
  /** Row states and window snapshots handed over in process (RowstateFeed), already applied to the store. */
  | { readonly source: 'local'; readonly touched: Touched };

export type Decided = ConfirmationRequested | GateEvaluated | WindowAlertRaised;

export interface DecidedGates {
  /** Positions to commit (decisions batches only: the global tables never commit). */
  readonly positions: readonly Position[];
  readonly weight: number;
  readonly emitted: readonly Decided[];
  /** Production windows this instance owns that changed. */
  readonly windows: readonly WindowTotal[];
  /**
   * Snapshots of owned partitions of passk.decisions to publish (every `snapshotEvery` records, and at a stop), as
   * records: a snapshot over `snapshotBytes` is its chunks, in order.
   */
  readonly snapshots: readonly GateBookSnapshot[];
}

export interface GateDecisionOptions {
  readonly producer: string;
  readonly minAttempts?: number;
  /** The log's partitioner: a window's alerts belong to the owner of its key's decisions partition. */
  readonly partitionOf: (key: string, partitions: number) => number;
  readonly alert?: Omit<AlertOptions, 'producer'>;
  /** A partition of passk.decisions is snapshotted once this many of its records were folded since. @default 20000 */
  readonly snapshotEvery?: number;
  /**
   * The largest record the log takes (`maxEventBytes`): a larger snapshot is written as chunks of at most this
   * (`chunkSnapshot`). @default 1000000
   */
  readonly snapshotBytes?: number;
}

export const DEFAULT_SNAPSHOT_EVERY = 20_000;

export type Touched = { versions: Set<string> | 'all'; windows: Set<string> | 'all' };

/**
 * Applies records of passk.rowstate to the store (row states and window shares keep the highest seq), adding the
 * versions and windows they touched to `into`. `states`: the row state a restore of this process already made of
 * each record, if any (frozen: held as it is, not converted again).
 */
export const applyRowstate = (
  store: GateStore,
  events: Iterable<PasskEvent>,
  into: { versions: Set<string>; windows: Set<string> },
  states?: RestoredStates,
): void => {
  let i = -1;
  for (const event of events) {
    i++;
    if (event.type === 'TraceWindowsUpdated') {
      if ((store.snapshots.get(event.source_partition)?.through_offset ?? -1) >= event.through_offset) continue;
      store.snapshots.set(event.source_partition, event);
      for (const share of event.shares) into.windows.add(windowKeyOf(share));
      continue;
    }
    if (event.type === 'GateBookSnapshot') {
      shelve(store.bookShelf, event);
      continue;
    }
    if (event.type !== 'RowStateChanged') continue;
    const key = versionKeyOf(event);
    let table = store.rows.get(key);
    if (!table) store.rows.set(key, (table = new Map()));
    if ((table.get(event.row_id)?.seq ?? -1) < event.seq)
      table.set(event.row_id, states?.[i] ?? fromRowStateChanged(event));
    into.versions.add(key);
  }
};

function* eventsOf(batch: EventBatch): Generator<PasskEvent> {
  for (const { event } of batch.events) yield event;
}

/** Applies one input batch to the store (row states and window shares keep the highest seq). Returns what it touched. */
export const applyGateInput = (store: GateStore, input: GateInput, producer: string): Touched => {
  if (input.source === 'tick') return { versions: 'all', windows: 'all' };
  if (input.source === 'final') return { versions: new Set(), windows: new Set() };
  if (input.source === 'local') return input.touched;
  const { batch } = input;
  if (input.source === 'closed' || input.source === 'decisions') {
    store.unpruned += batch.events.length;
    if (store.horizonMs > 0 && store.unpruned >= PRUNE_EVERY) pruneStore(store);
  }
  if (input.source === 'rowstate') {
    const touched = { versions: new Set<string>(), windows: new Set<string>() };
    applyRowstate(store, eventsOf(batch), touched);
    return touched;
  }
  if (input.source === 'closed') {
    const touched = new Set<string>();
    for (const { event } of batch.events) {
      if (event.type !== 'RunClosed') continue;
      addClosed(store, event);
      touched.add(versionKeyOf(event));
    }
    return { versions: touched, windows: new Set() };
  }
  if (input.source === 'datasets') {
    for (const { event } of batch.events)
      if (event.type === 'DatasetRowUpserted' || event.type === 'FailureConfirmed')
        store.datasets.set(
          event.dataset_id,
          evolveDataset(store.datasets.get(event.dataset_id), event, producer).state,
        );
    return { versions: 'all', windows: new Set() };
  }
  const book = store.books.get(batch.partition) ?? emptyBook();
  const fold = processorsFold(store.horizonMs);
  for (const { event } of batch.events) if (isDecision(event)) foldBookInto(book, event, fold);
  store.books.set(batch.partition, book);
  const prefix = store.prefixes.get(batch.partition);
  if (prefix) foldPrefix(prefix, batch.events, batch.lastOffset);
  return { versions: 'all', windows: 'all' };
};

/** Offline pass@1 of an agent version over every suite and dataset version: the mean over rows of c/n. */
export const offlinePassAt1 = (store: GateStore, agentVersion: string): number | undefined => {
  let sum = 0;
  let rows = 0;
  for (const table of store.rows.values())
    for (const r of table.values()) {
      if (r.agent_version !== agentVersion) break; // one table holds one version
      if (r.n > 0) {
        sum += r.c / r.n;
        rows++;
      }
    }
  return rows === 0 ? undefined : sum / rows;
};

/** Totals of the windows this instance owns that changed, and alerts for the closed ones not yet alerted. */
export const decideWindows = (
  store: GateStore,
  touched: Set<string> | 'all',
  o: GateDecisionOptions,
): { windows: WindowTotal[]; alerts: WindowAlertRaised[] } => {
  const windows: WindowTotal[] = [];
  const alerts: WindowAlertRaised[] = [];
  if (store.decisionPartitions === 0) return { windows, alerts };
  const all = () => new Set([...store.snapshots.values()].flatMap((s) => s.shares.map(windowKeyOf)));
  for (const key of [...(touched === 'all' ? all() : touched)].sort()) {
    const total = totalOf(key, store.snapshots);
    if (!total) continue;
    const partition = o.partitionOf(windowAlertKey(total), store.decisionPartitions);
    const book = store.books.get(partition);
    if (!book) continue; // another instance owns this window
    windows.push(total);
    const alert = alertFor(total, offlinePassAt1(store, total.agent_version), { producer: o.producer, ...o.alert });
    if (alert && foldBookInto(book, alert, processorsFold(store.horizonMs))) alerts.push(alert);
  }
  return { windows, alerts };
};

/** Decides every open comparison the change may concern, applying what it decides to the books (in place) at once. */
export const decideOpen = (
  store: GateStore,
  touched: Set<string> | 'all',
  producer: string,
  minAttempts?: number,
): (ConfirmationRequested | GateEvaluated)[] => {
  if (touched !== 'all' && touched.size === 0) return [];
  const out: (ConfirmationRequested | GateEvaluated)[] = [];
  const fold = processorsFold(store.horizonMs);
  const o = { producer, horizonMs: store.horizonMs, ...(minAttempts ? { minAttempts } : {}) };
  for (const [, b] of [...store.books].sort((x, y) => x[0] - y[0])) {
    for (const id of Object.keys(b.comparisons).sort()) {
      const c = b.comparisons[id]!;
      const d = c.declared;
      const concerned =
        touched === 'all' ||
        touched.has(versionKeyOf({ suite: d.suite, dataset_version: d.dataset_version, agent_version: d.candidate })) ||
        touched.has(versionKeyOf({ suite: d.suite, dataset_version: d.dataset_version, agent_version: d.baseline }));
      if (!concerned || c.status === 'decided') continue;
      for (const e of decideComparison(b, c, store.view, o)) {
        foldBookInto(b, e, fold);
        out.push(e);
      }
    }
  }
  return out;
};

/** One step of the gates: fold the input, then decide what it may have completed. */
export const decideGates = (store: GateStore, o: GateDecisionOptions): OperatorFunction<GateInput, DecidedGates> =>
  map((input) => {
    const touched = applyGateInput(store, input, o.producer);
    const emitted: Decided[] = decideOpen(store, touched.versions, o.producer, o.minAttempts);
    const { windows, alerts } = decideWindows(store, touched.windows, o);
    pushAll(emitted, alerts);
    const snapshots = snapshotsDue(store, input, o);
    if (input.source === 'tick' || input.source === 'final')
      return { positions: [], weight: 0, emitted, windows, snapshots };
    // a handover holds one record of the in-flight window (RowstateFeed in the gates topology)
    if (input.source === 'local') return { positions: [], weight: 1, emitted, windows, snapshots };
    const { batch } = input;
    const positions =
      input.source === 'decisions'
        ? [{ topic: TOPICS.decisions, partition: batch.partition, nextOffset: batch.lastOffset + 1 }]
        : [];
    return { positions, weight: weightOf(batch), emitted, windows, snapshots };
  });

/** The snapshots an input makes due: its partition's past `snapshotEvery` records since the last, or all at a stop. */
const snapshotsDue = (store: GateStore, input: GateInput, o: GateDecisionOptions): GateBookSnapshot[] => {
  const every = o.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
  const due =
    input.source === 'final'
      ? [...store.prefixes].filter(([, s]) => s.since > 0)
      : input.source === 'decisions'
        ? [...store.prefixes].filter(([p, s]) => p === input.batch.partition && s.since >= every)
        : [];
  return due.flatMap(([p, s]) => {
    s.since = 0;
    const whole = toGateBookSnapshot(s, p, store.decisionPartitions, o.producer);
    const records = chunkSnapshot(whole, o.snapshotBytes ?? 1_000_000, nextSlot(store.bookShelf, p));
    // the next chunked one goes to the other slot (`publishSnapshots` gives this one back if it is not written)
    if (records[0]?.chunk) store.bookShelf.slots.set(p, records[0].chunk.slot);
    return records;
  });
};
