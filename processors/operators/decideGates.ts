import { concatMap, from, of, type OperatorFunction } from 'rxjs';
import type { ConfirmationRequested, RunClosed } from '../../schemas/events/comparisons.ts';
import type { GateEvaluated, RowStateChanged } from '../../schemas/events/decisions.ts';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import type { WindowAlertRaised } from '../../schemas/events/windowAlertRaised.ts';
import { candidateKey, isSnapshotKey, KEY_SEP, TOPICS, windowAlertKey } from '../../schemas/topics.ts';
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
  evictPrefixClosed,
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
  /** suite␟agent version → its RunClosed by event id (a loaded key holds every run the log holds of it). */
  readonly closed: Map<string, Map<string, RunClosed>>;
  /**
   * suite␟agent version keys whose closed runs were evicted with their row tables (`evictRows` with `closed`), or that
   * a restored snapshot left out (`closed_evicted`): none of their runs is held, and none is kept until a reload
   * (`reloadPinned`) reads them all again from passk.decisions. A decision never reads one.
   */
  readonly closedEvicted: Set<string>;
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
  /**
   * Versions (`versionKeyOf`) whose row table was evicted (`evictRows`): not in `rows`, and no row state for them is
   * kept until a reload (`reloadPinned`) reads the whole table again from passk.rowstate. A decision never reads one.
   */
  readonly evicted: Set<string>;
  /**
   * The suite and agent version of each version seen whose key does not split into its three parts (an id holding
   * KEY_SEP: `partsOf`), kept from its first row state (its key alone is ambiguous then).
   */
  readonly oddVersions: Map<string, VersionParts>;
  /** Versions being reloaded: the row states that arrive meanwhile (the reload's read may end before them). */
  readonly reloading: Map<string, Map<string, StreamRowState>>;
  /** Per loaded version, the event time of its newest row state; `rowClock` is the newest over all. */
  readonly rowTimes: Map<string, number>;
  rowClock: number;
  /** Loaded versions a decided comparison named: evicted as soon as no open comparison or window pins them. */
  readonly done: Set<string>;
  /** A verdict named loaded versions since the last `evictRows`; steps since it (the idle ones go every `EVICT_EVERY`). */
  evictDue: boolean;
  sinceEvicted: number;
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
    closedEvicted: new Set(),
    snapshots: new Map(),
    decisionPartitions: 0,
    horizonMs,
    closedAt: 0,
    unpruned: 0,
    evicted: new Set(),
    oddVersions: new Map(),
    reloading: new Map(),
    rowTimes: new Map(),
    rowClock: 0,
    done: new Set(),
    evictDue: false,
    sinceEvicted: 0,
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

/**
 * Adds a closed run to the store's global table (one older than the horizon is not kept, nor one of an evicted key:
 * the reload reads it from the log, where it is durable; its time still moves the clock).
 */
export const addClosed = (store: GateStore, run: RunClosed): void => {
  store.closedAt = Math.max(store.closedAt, run.occurred_at);
  if (pastHorizon(store.closedAt, run.occurred_at, store.horizonMs)) return;
  const key = candidateKey(run.suite, run.agent_version);
  if (store.closedEvicted.has(key)) return;
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
  /** Evicts row tables no decision needs after each step (needs `reload`). Absent: every table stays. */
  readonly evict?: EvictOptions;
  /**
   * Reads evicted versions again from passk.rowstate, before a decision needs them. Wire it (and `reloadClosed`) even
   * without `evict`: a restore may hold what an evicting run left out (a snapshot's `closed_evicted`), and a comparison
   * naming an evicted key is decided only once it is reloaded.
   */
  readonly reload?: RowReload;
  /**
   * Reads evicted closed runs again from passk.decisions, in the same reload as the rows. With it (and `evict`), a
   * version's closed runs are evicted with its row tables; absent, every closed run stays (and a key a restored
   * snapshot names evicted is never decided).
   */
  readonly reloadClosed?: ClosedReload;
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
  const latest = idleClockLatest();
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
    if (store.evicted.has(key)) {
      // never a partial table: the reload reads it from the log, where this record is durable already; one that
      // arrives while the reload reads may come after the end it reads to, so it is kept for the merge
      const staged = store.reloading.get(key);
      if (staged && (staged.get(event.row_id)?.seq ?? -1) < event.seq)
        staged.set(event.row_id, states?.[i] ?? fromRowStateChanged(event));
      continue;
    }
    let table = store.rows.get(key);
    if (!table) {
      store.rows.set(key, (table = new Map()));
      if (key.split(KEY_SEP).length !== 3 && !store.oddVersions.has(key))
        store.oddVersions.set(key, { suite: event.suite, agent_version: event.agent_version });
    }
    if ((table.get(event.row_id)?.seq ?? -1) < event.seq)
      table.set(event.row_id, states?.[i] ?? fromRowStateChanged(event));
    store.rowTimes.set(key, Math.max(store.rowTimes.get(key) ?? 0, event.occurred_at));
    store.rowClock = Math.max(store.rowClock, Math.min(event.occurred_at, latest));
    into.versions.add(key);
  }
};

/**
 * The version (`versionKeyOf`) of a row state's key on passk.rowstate (`rowKey`): undefined unless the key splits into
 * exactly its four parts (an id holding KEY_SEP, which ingest accepts, makes any split a guess, which could name
 * another version). By index, not split: a restore by key runs it on every record.
 */
export const versionOfRowKey = (key: string): string | undefined => {
  const a = key.indexOf(KEY_SEP);
  const b = a < 0 ? -1 : key.indexOf(KEY_SEP, a + 1);
  const c = b < 0 ? -1 : key.indexOf(KEY_SEP, b + 1);
  return c < 0 || key.includes(KEY_SEP, c + 1) ? undefined : key.slice(0, c);
};

/** A version's suite and agent version: what its closed runs' key and its production windows name. */
export type VersionParts = { readonly suite: string; readonly agent_version: string };

/**
 * A version key's suite and agent version: split when it splits into exactly three parts, else as its first row
 * state named them (`GateStore.oddVersions`); undefined for a version never seen (nothing pins or holds it then).
 */
const partsOf = (store: GateStore, versionKey: string): VersionParts | undefined => {
  // by index, not split: the alerts' check runs over every evicted version
  const a = versionKey.indexOf(KEY_SEP);
  const b = a < 0 ? -1 : versionKey.indexOf(KEY_SEP, a + 1);
  if (b < 0 || versionKey.includes(KEY_SEP, b + 1)) return store.oddVersions.get(versionKey);
  return { suite: versionKey.slice(0, a), agent_version: versionKey.slice(b + 1) };
};

/**
 * The key filter of a restore of passk.rowstate that evicts at once (`ConsumerOptions.keys`; docs/processors.md,
 * "Evicting versions from the row tables"): the snapshots' records (gate books, production windows) are read; a row
 * state's is skipped undecoded, its version marked evicted. The restore's tick then reloads what the restored books
 * and windows pin (`reloadPinned`), before it decides: no version nothing pins is ever decoded at a restore.
 */
export const restoreKeys =
  (store: GateStore): ((key: string) => boolean) =>
  (key) => {
    if (isSnapshotKey(key)) return true;
    const version = versionOfRowKey(key);
    // a key that does not split exactly is decoded and applied, never skipped on a guess at its version (a wrong one
    // marked evicted, the real one not: later records of it would make a partial table); a loaded table is never
    // left partial (none is loaded when a restore starts)
    if (version === undefined || store.rows.has(version)) return true;
    store.evicted.add(version);
    return false;
  };

/**
 * The latest time the idle clock takes from a row state: a day past the wall clock (read once per batch applied).
 * One trial dated in the future (a producer's clock wrong) would otherwise make every version nothing pins idle for
 * good, and each later declaration naming one would pay a full read of passk.rowstate. Decisions never read this
 * clock; only eviction does.
 */
const idleClockLatest = (): number => Date.now() + 86_400_000;

/** Whether an evicted version passes `test` (no copy of the set: it holds every version ever evicted). */
const anyEvicted = (store: GateStore, test: (versionKey: string) => boolean): boolean => {
  for (const key of store.evicted) if (test(key)) return true;
  return false;
};

/** The versions a comparison reads: its baseline's and candidate's on its suite and dataset version. */
const versionsOf = (d: { suite: string; dataset_version: string; baseline: string; candidate: string }): string[] => [
  versionKeyOf({ suite: d.suite, dataset_version: d.dataset_version, agent_version: d.baseline }),
  versionKeyOf({ suite: d.suite, dataset_version: d.dataset_version, agent_version: d.candidate }),
];

/** Agent versions with production windows: the alerts read every row table of theirs (`offlinePassAt1`). */
const productionAgents = (store: GateStore): Set<string> => {
  const agents = new Set<string>();
  for (const s of store.snapshots.values()) for (const share of s.shares) agents.add(share.agent_version);
  return agents;
};

const agentOf = (store: GateStore, versionKey: string): string | undefined => partsOf(store, versionKey)?.agent_version;

/**
 * Whether a loaded or evicted version must be loaded for a decision: an open comparison of an owned book names it,
 * or its agent version has production windows.
 */
export const pinnedBy = (store: GateStore): ((versionKey: string) => boolean) => {
  const named = new Set<string>();
  for (const book of store.books.values())
    for (const c of Object.values(book.comparisons))
      if (c.status !== 'decided') for (const k of versionsOf(c.declared)) named.add(k);
  const agents = productionAgents(store);
  return (key) => {
    if (named.has(key)) return true;
    const agent = agents.size > 0 ? agentOf(store, key) : undefined;
    return agent !== undefined && agents.has(agent);
  };
};

/** The suite␟agent version keys whose closed runs a decision may read: those open comparisons of owned books name. */
export const closedPinnedBy = (store: GateStore): ((closedKey: string) => boolean) => {
  const named = new Set<string>();
  for (const book of store.books.values())
    for (const c of Object.values(book.comparisons))
      if (c.status !== 'decided')
        for (const v of [c.declared.baseline, c.declared.candidate]) named.add(candidateKey(c.declared.suite, v));
  return (key) => named.has(key);
};

/** The closed runs' key (suite␟agent version) of a version (suite␟dataset version␟agent version). */
const closedKeyOf = (store: GateStore, versionKey: string): string | undefined => {
  const parts = partsOf(store, versionKey);
  return parts && candidateKey(parts.suite, parts.agent_version);
};

/** Steps between two looks for idle versions to evict (a verdict's versions are looked at after its step). */
export const EVICT_EVERY = 1_000;

export interface EvictOptions {
  /**
   * A version no open comparison or production window pins is evicted once its newest row state is this much older
   * (event time) than the newest row state of any version; one a decided comparison named, at once. 0: only the
   * latter. @default 0
   */
  readonly idleMs?: number;
  /** Evict every version nothing pins, whatever its age (tests force evictions with it). */
  readonly all?: boolean;
  /**
   * Evict closed runs too (needs a `reloadClosed`): a suite␟agent version key no open comparison names, none of whose
   * row tables is loaded, and whose newest run closed `idleMs` before the newest row state of any version (any age
   * with `all`). A decided comparison's versions keep their runs for the idle window: the next declaration usually
   * names one (its candidate becomes a baseline), and a reload of runs reads the whole of passk.decisions.
   */
  readonly closed?: boolean;
}

/**
 * Evicts, in place, the row tables no decision needs now (docs/processors.md, "Evicting versions from the row
 * tables"): each is dropped whole, and its version is marked evicted until a reload. Returns the versions evicted.
 */
export const evictRows = (store: GateStore, o: EvictOptions = {}): string[] => {
  const pinned = pinnedBy(store);
  const idleMs = o.idleMs ?? 0;
  const out: string[] = [];
  store.evictDue = false;
  store.sinceEvicted = 0;
  for (const key of [...store.rows.keys()]) {
    if (pinned(key) || store.reloading.has(key)) continue;
    const idle = idleMs > 0 && (store.rowTimes.get(key) ?? 0) < store.rowClock - idleMs;
    if (!o.all && !idle && !store.done.has(key)) continue;
    store.rows.delete(key);
    store.rowTimes.delete(key);
    store.done.delete(key);
    store.evicted.add(key);
    out.push(key);
  }
  for (const key of [...store.done]) if (!store.rows.has(key)) store.done.delete(key);
  if (o.closed) evictClosed(store, o);
  return out;
};

/**
 * Evicts, in place, the closed runs of every suite␟agent version key no open comparison names, with no row table
 * loaded (they go with their version's rows) and no run closed within the idle window (`EvictOptions.closed`): dropped whole from the global table and from the owned partitions'
 * prefixes (so their snapshots leave them out), the key marked evicted until a reload. Returns the keys evicted.
 */
export const evictClosed = (store: GateStore, o: Pick<EvictOptions, 'idleMs' | 'all'> = { all: true }): string[] => {
  const pinned = closedPinnedBy(store);
  const before = store.rowClock - (o.idleMs ?? 0);
  const loaded = new Set<string>();
  for (const key of [...store.rows.keys(), ...store.reloading.keys()]) {
    const closedKey = closedKeyOf(store, key);
    if (closedKey !== undefined) loaded.add(closedKey);
  }
  const out: string[] = [];
  for (const [key, runs] of store.closed) {
    if (pinned(key) || loaded.has(key)) continue;
    if (!o.all && [...runs.values()].some((r) => r.occurred_at >= before)) continue;
    store.closedEvicted.add(key);
    out.push(key);
  }
  for (const key of out) store.closed.delete(key);
  if (out.length > 0) for (const prefix of store.prefixes.values()) evictPrefixClosed(prefix, out);
  return out;
};

/**
 * Reads the row states of evicted versions again from passk.rowstate (every record whose key is one of their rows',
 * to the end the read sees when it starts). Undefined when the read was cut short (a stop): nothing is reloaded then.
 */
export type RowReload = (versions: ReadonlySet<string>) => Promise<Iterable<RowStateChanged> | undefined>;

/**
 * Reads the closed runs of evicted suite␟agent version keys again from passk.decisions (every RunClosed under one of
 * those keys, to the end the read sees when it starts). Undefined when the read was cut short.
 */
export type ClosedReload = (keys: ReadonlySet<string>) => Promise<Iterable<RunClosed> | undefined>;

/**
 * Reloads the evicted versions a decision now needs (pinned), before it decides: every row state the log holds for
 * them, merged by seq with those that arrived during the read. Returns the versions reloaded.
 */
export const reloadPinned = async (
  store: GateStore,
  reload: RowReload,
  pinned: (versionKey: string) => boolean = pinnedBy(store),
  closed?: { readonly reload: ClosedReload; readonly pinned: (closedKey: string) => boolean },
): Promise<Set<string>> => {
  const wanted = new Set([...store.evicted].filter((k) => pinned(k) && !store.reloading.has(k)));
  const runsWanted = new Set(closed ? [...store.closedEvicted].filter(closed.pinned) : []);
  if (wanted.size === 0 && runsWanted.size === 0) return wanted;
  for (const key of wanted) store.reloading.set(key, new Map());
  try {
    // the rows and the closed runs in one reload (both reads at once); either cut short: neither is reloaded
    const [states, runs] = await Promise.all([
      wanted.size === 0 ? [] : reload(wanted),
      runsWanted.size === 0 || !closed ? [] : closed.reload(runsWanted),
    ]);
    if (!states || !runs) return new Set();
    for (const key of runsWanted) store.closedEvicted.delete(key);
    for (const run of runs) if (runsWanted.has(candidateKey(run.suite, run.agent_version))) addClosed(store, run);
    // only the wanted versions are being reloaded (a step that reloads holds the next ones): staged is one of theirs
    for (const e of states) {
      const staged = store.reloading.get(versionKeyOf(e));
      if (staged && (staged.get(e.row_id)?.seq ?? -1) < e.seq) staged.set(e.row_id, fromRowStateChanged(e));
    }
    for (const key of wanted) {
      const table = store.reloading.get(key)!;
      store.evicted.delete(key);
      if (table.size === 0) continue; // a version named before any of its rows: as if never seen
      store.rows.set(key, table);
      let t = 0;
      for (const r of table.values()) t = Math.max(t, r.occurred_at);
      store.rowTimes.set(key, t);
      store.rowClock = Math.max(store.rowClock, Math.min(t, idleClockLatest()));
    }
    // the versions of a key whose runs came back are decided again (their completeness may have changed)
    return runsWanted.size === 0 ? wanted : new Set([...wanted, ...loadedOf(store, runsWanted)]);
  } finally {
    for (const key of wanted) store.reloading.delete(key);
  }
};

/** The loaded versions of closed runs' keys. */
const loadedOf = (store: GateStore, closedKeys: ReadonlySet<string>): string[] =>
  [...store.rows.keys()].filter((k) => closedKeys.has(closedKeyOf(store, k) ?? ''));

/** The versions a verdict named, to evict once nothing pins them. */
const noteDecided = (store: GateStore, e: PasskEvent): void => {
  if (e.type !== 'GateEvaluated') return;
  for (const key of versionsOf(e))
    if (store.rows.has(key)) {
      store.done.add(key);
      store.evictDue = true;
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
  for (const { event } of batch.events)
    if (isDecision(event)) {
      foldBookInto(book, event, fold);
      noteDecided(store, event);
    }
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
    // an evicted table of its agent version is reloaded before the alert reads them all (it is pinned now)
    if (anyEvicted(store, (k) => agentOf(store, k) === total.agent_version)) continue;
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
      const versions = versionsOf(d);
      const concerned = touched === 'all' || versions.some((k) => touched.has(k));
      if (!concerned || c.status === 'decided') continue;
      // a version not loaded again yet is never read, nor its closed runs: the decision waits for its reload
      if (versions.some((k) => store.evicted.has(k))) continue;
      if (
        store.closedEvicted.size > 0 &&
        [d.baseline, d.candidate].some((v) => store.closedEvicted.has(candidateKey(d.suite, v)))
      )
        continue;
      for (const e of decideComparison(b, c, store.view, o)) {
        foldBookInto(b, e, fold);
        noteDecided(store, e);
        out.push(e);
      }
    }
  }
  return out;
};

/** One step of the gates, after its input was applied (and any evicted version it needs reloaded). */
const decideStep = (
  store: GateStore,
  input: GateInput,
  touched: Touched,
  reloaded: ReadonlySet<string>,
  o: GateDecisionOptions,
): DecidedGates => {
  const versions =
    reloaded.size === 0 || touched.versions === 'all' ? touched.versions : new Set([...touched.versions, ...reloaded]);
  const emitted: Decided[] = decideOpen(store, versions, o.producer, o.minAttempts);
  const { windows, alerts } = decideWindows(store, reloaded.size > 0 ? 'all' : touched.windows, o);
  pushAll(emitted, alerts);
  const snapshots = snapshotsDue(store, input, o);
  // after a verdict (its versions may go at once) or a restore's tick, else every EVICT_EVERY steps (the idle ones)
  const look = store.evictDue || input.source === 'tick' || ++store.sinceEvicted >= EVICT_EVERY;
  if (o.evict && o.reload && store.decisionPartitions > 0 && look)
    evictRows(store, o.reloadClosed ? { ...o.evict, closed: true } : o.evict);
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
};

/**
 * One step of the gates: fold the input, reload what an open comparison or window now needs of an evicted version
 * (asynchronous, only then), decide what it may have completed, then evict what nothing needs (with `evict`).
 */
export const gateStep = (
  store: GateStore,
  input: GateInput,
  o: GateDecisionOptions,
): DecidedGates | Promise<DecidedGates> => {
  const touched = applyGateInput(store, input, o.producer);
  const none = new Set<string>();
  // only a declaration (decisions), a restore (tick) or a production window can pin an evicted version
  const mayPin =
    input.source === 'decisions' || input.source === 'tick' || touched.windows === 'all' || touched.windows.size > 0;
  const closedToo = o.reloadClosed !== undefined && store.closedEvicted.size > 0;
  if (!o.reload || (store.evicted.size === 0 && !closedToo) || !mayPin)
    return decideStep(store, input, touched, none, o);
  const pinned = pinnedBy(store);
  const closed = closedToo ? { reload: o.reloadClosed!, pinned: closedPinnedBy(store) } : undefined;
  const anyClosed = closed !== undefined && [...store.closedEvicted].some(closed.pinned);
  if (!anyEvicted(store, pinned) && !anyClosed) return decideStep(store, input, touched, none, o);
  return reloadPinned(store, o.reload, pinned, closed).then((reloaded) =>
    decideStep(store, input, touched, reloaded, o),
  );
};

/** The gates' steps in order: a step that reloads holds the next ones until it has decided. */
export const decideGates = (store: GateStore, o: GateDecisionOptions): OperatorFunction<GateInput, DecidedGates> =>
  concatMap((input) => {
    const step = gateStep(store, input, o);
    return step instanceof Promise ? from(step) : of(step);
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
