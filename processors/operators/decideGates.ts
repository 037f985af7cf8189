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
  alertsHorizon,
  decidedInLog,
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
  ownIdHorizon,
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
   * The ids horizon (`FoldOptions.idHorizonMs`; no horizon, ids kept: Kafka's default): decided and verdict ids a
   * declaration came this long after leave the books. Closed runs and the rest are not touched. 0: none.
   */
  readonly idHorizonMs: number;
  /** The alerts horizon (`FoldOptions.alertHorizonMs`; no horizon, both backends): alert ids it leaves behind. 0: none. */
  readonly alertHorizonMs: number;
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
   * Restored from the log's outline without its versions (`restoreOutline`, the embedded log): a version neither
   * loaded (`rows`), nor `fresh`, nor in `evicted` is evicted too (`isEvicted`): the log may hold its row states, and
   * none is kept until a reload reads them. So a restore holds nothing per version ever seen; a version is named in
   * `evicted` once a row state of it arrives, once an open comparison names it (before its reload), or once its agent
   * has production windows (`expandedAgents`).
   */
  outlined: boolean;
  /**
   * Outlined: versions a reload found no row state of (named by an open comparison before its first row): their row
   * states make a table from then on, as a version never seen does. Dropped once loaded, or no longer pinned.
   */
  readonly fresh: Set<string>;
  /**
   * Outlined: agent versions with production windows whose versions the log holds were all named in `evicted` (or
   * loaded), from the log's version list (`GateDecisionOptions.rowstateVersions`): their alerts read every table of
   * theirs, so they wait until then.
   */
  readonly expandedAgents: Set<string>;
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
  /**
   * The books forget decided ids (`FoldOptions.forgetDecided`; no horizon): a comparison is decided only once the log
   * was looked up for it (`checked`), and a candidate's verdict ids are held only while an open comparison names it.
   */
  readonly forgetDecided: boolean;
  /** Open comparisons (`partition␟id`) the log was looked up for since they entered the book (`checkDecided`). */
  readonly checked: Set<string>;
  /**
   * Verdicts this process decided and has not read back from passk.decisions yet, by event id: what a look-up in the
   * log cannot see yet (a re-declaration meanwhile is still decided; a verdict on the candidate still counts).
   */
  readonly pending: Map<string, { readonly partition: number; readonly id: string; readonly key: string }>;
  readonly view: GateView;
}

export const createGateStore = (
  o: { readonly horizonMs?: number; readonly forgetDecided?: boolean; readonly idHorizonMs?: number } = {},
): GateStore => {
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
    idHorizonMs: ownIdHorizon(horizonMs, o.forgetDecided, o.idHorizonMs),
    alertHorizonMs: alertsHorizon(horizonMs, o.idHorizonMs),
    closedAt: 0,
    unpruned: 0,
    evicted: new Set(),
    outlined: false,
    fresh: new Set(),
    expandedAgents: new Set(),
    oddVersions: new Map(),
    reloading: new Map(),
    rowTimes: new Map(),
    rowClock: 0,
    done: new Set(),
    evictDue: false,
    sinceEvicted: 0,
    forgetDecided: (o.forgetDecided ?? false) && horizonMs <= 0,
    checked: new Set(),
    pending: new Map(),
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
  for (const book of store.books.values()) pruneBook(book, store.horizonMs, store.idHorizonMs, store.alertHorizonMs);
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
  /**
   * Reads a candidate's records of passk.decisions by key, for books that forget decided ids (`createGateStore`'s
   * `forgetDecided`): a comparison is decided only once the log was looked up for it (`checkDecided`). Required then.
   */
  readonly lookupDecided?: DecisionsLookup;
  /**
   * The versions passk.rowstate holds (the embedded log's outline with its versions), for a store restored from the
   * outline without them (`GateStore.outlined`): read once a production window names an agent not expanded yet.
   * Undefined when the read was cut short. Required then (an outlined store with windows and none throws).
   */
  readonly rowstateVersions?: () => Promise<readonly string[] | undefined>;
}

/** Whether a version's row table is evicted: named so, or (outlined) neither loaded nor fresh (`GateStore.outlined`). */
export const isEvicted = (store: GateStore, versionKey: string): boolean =>
  store.evicted.has(versionKey) || (store.outlined && !store.rows.has(versionKey) && !store.fresh.has(versionKey));

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
    if (isEvicted(store, key)) {
      // outlined, a version seen for the first time since the restore: named evicted from now on (the alerts and the
      // reloads look for evicted versions there), with its parts if its key does not split into three
      if (!store.evicted.has(key)) {
        store.evicted.add(key);
        if (key.split(KEY_SEP).length !== 3 && !store.oddVersions.has(key))
          store.oddVersions.set(key, { suite: event.suite, agent_version: event.agent_version });
        into.versions.add(key); // the step reloads it if something pins it (a production window's agent)
      }
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
      store.fresh.delete(key);
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
 * What a restore by key needs of passk.rowstate's keys (`RowstateOutline`, which the embedded log reads by its indexes),
 * computed from every key: the versions of the keys that split exactly into four parts, and every other key.
 */
export const outlineOfKeys = (keys: Iterable<string>): { versions: string[]; odd: string[] } => {
  const versions = new Set<string>();
  const odd = new Set<string>();
  for (const key of keys) {
    const version = versionOfRowKey(key);
    if (version === undefined) odd.add(key);
    else versions.add(version);
  }
  return { versions: [...versions], odd: [...odd] };
};

/**
 * `restoreKeys` from an outline of passk.rowstate's keys rather than from each key in turn (the embedded log: no walk
 * of every key): every version the outline names is marked evicted at once, and the filter returned keeps the other
 * keys (snapshots, keys that do not split into four parts: decoded and applied). A record of those whose version is
 * marked evicted is then not kept (`applyRowstate`): a reload reads it with the rest of its version (its key starts
 * with the version's). The restore's tick reloads what the books and windows pin, as after `restoreKeys`.
 */
export const restoreOutline = (
  store: GateStore,
  outline: { readonly odd: readonly string[] },
): ((key: string) => boolean) => {
  // no version named: every version not loaded is evicted (`outlined`), whatever the log holds
  store.outlined = true;
  const odd = new Set(outline.odd);
  return (key) => odd.has(key);
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

/** The versions open comparisons of owned books name. */
const namedVersions = (store: GateStore): Set<string> => {
  const named = new Set<string>();
  for (const book of store.books.values())
    for (const c of Object.values(book.comparisons))
      if (c.status !== 'decided') for (const k of versionsOf(c.declared)) named.add(k);
  return named;
};

/**
 * Outlined (`GateStore.outlined`): names evicted the versions open comparisons name that are evicted without being
 * named (neither loaded nor fresh), so that a reload reads them (an empty one makes them fresh).
 */
const nameEvicted = (store: GateStore): void => {
  if (!store.outlined) return;
  for (const key of namedVersions(store))
    if (!store.evicted.has(key) && isEvicted(store, key) && !store.reloading.has(key)) store.evicted.add(key);
};

/**
 * Outlined: the production agents whose versions are not all named evicted (or loaded) yet (`expandedAgents`).
 */
const unexpandedAgents = (store: GateStore): Set<string> => {
  const out = new Set<string>();
  if (!store.outlined || store.snapshots.size === 0) return out;
  for (const agent of productionAgents(store)) if (!store.expandedAgents.has(agent)) out.add(agent);
  return out;
};

/**
 * Outlined: names evicted every version of `agents` the log holds (`versions`, its version list) that is not loaded,
 * and marks those agents expanded (their alerts may read their tables once the reload brought them back).
 */
const expandAgents = (store: GateStore, agents: ReadonlySet<string>, versions: readonly string[]): void => {
  for (const key of versions) {
    const agent = agentOf(store, key);
    if (agent === undefined || !agents.has(agent) || store.rows.has(key) || store.reloading.has(key)) continue;
    store.fresh.delete(key);
    store.evicted.add(key);
  }
  for (const agent of agents) store.expandedAgents.add(agent);
};

/**
 * Whether a loaded or evicted version must be loaded for a decision: an open comparison of an owned book names it,
 * or its agent version has production windows.
 */
export const pinnedBy = (store: GateStore): ((versionKey: string) => boolean) => {
  const named = namedVersions(store);
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
  // a fresh version nothing pins any more is evicted as any other (outlined: the log is asked again once pinned)
  for (const key of [...store.fresh]) if (!pinned(key)) store.fresh.delete(key);
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
      if (table.size === 0) {
        // a version named before any of its rows: as if never seen (outlined: its rows make a table from now on)
        if (store.outlined) store.fresh.add(key);
        continue;
      }
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
    if ((store.horizonMs > 0 || store.idHorizonMs > 0 || store.alertHorizonMs > 0) && store.unpruned >= PRUNE_EVERY)
      pruneStore(store);
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
  const fold = foldOf(store);
  for (const { event } of batch.events)
    if (isDecision(event)) {
      foldBookInto(book, event, fold);
      noteDecided(store, event);
      if (event.type === 'GateEvaluated') {
        store.pending.delete(event.event_id); // the log holds it now
        store.checked.delete(checkKey(batch.partition, event.gate_id)); // it left the book: a re-declaration is looked up
      }
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
    if (store.outlined && !store.expandedAgents.has(total.agent_version)) continue; // its versions not known yet
    if (anyEvicted(store, (k) => agentOf(store, k) === total.agent_version)) continue;
    const alert = alertFor(total, offlinePassAt1(store, total.agent_version), { producer: o.producer, ...o.alert });
    if (alert && foldBookInto(book, alert, foldOf(store))) alerts.push(alert);
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
  const fold = foldOf(store);
  const o = {
    producer,
    horizonMs: store.horizonMs,
    idHorizonMs: store.idHorizonMs,
    ...(minAttempts ? { minAttempts } : {}),
  };
  for (const [p, b] of [...store.books].sort((x, y) => x[0] - y[0])) {
    let verdicts = 0;
    for (const id of Object.keys(b.comparisons).sort()) {
      const c = b.comparisons[id]!;
      const d = c.declared;
      const versions = versionsOf(d);
      const concerned = touched === 'all' || versions.some((k) => touched.has(k));
      if (!concerned || c.status === 'decided') continue;
      // forgetting decided ids, a comparison the log was not looked up for may be decided already: it waits for it
      if (store.forgetDecided && !store.checked.has(checkKey(p, id))) continue;
      // a version not loaded again yet is never read, nor its closed runs: the decision waits for its reload
      if (versions.some((k) => isEvicted(store, k))) continue;
      if (
        store.closedEvicted.size > 0 &&
        [d.baseline, d.candidate].some((v) => store.closedEvicted.has(candidateKey(d.suite, v)))
      )
        continue;
      for (const e of decideComparison(b, c, store.view, o)) {
        foldBookInto(b, e, fold);
        noteDecided(store, e);
        out.push(e);
        if (e.type === 'GateEvaluated' && store.forgetDecided) {
          store.pending.set(e.event_id, { partition: p, id, key: candidateKey(e.suite, e.candidate) });
          store.checked.delete(checkKey(p, id));
          verdicts++;
        }
      }
    }
    if (verdicts > 0) releaseVerdicts(b);
  }
  return out;
};

/** The fold of the store's books: the processors' (decided evicted), with its horizon, forgetting decided ids or not. */
const foldOf = (store: GateStore) =>
  processorsFold(store.horizonMs, store.forgetDecided, store.idHorizonMs, store.alertHorizonMs);

/** A comparison of a partition's book, in `GateStore.checked`. */
const checkKey = (partition: number, id: string): string => `${partition}${KEY_SEP}${id}`;

/** Drops, in place, the verdict ids of the candidates no open comparison of the book names (forgetting decided ids). */
const releaseVerdicts = (b: GateBook): void => {
  const named = new Set(Object.values(b.comparisons).map((c) => candidateKey(c.declared.suite, c.declared.candidate)));
  for (const key of Object.keys(b.verdicts)) if (!named.has(key)) delete b.verdicts[key];
};

/**
 * Reads every record of passk.decisions under the given keys (suite␟candidate), in log order per partition, to the
 * end the read sees when it starts. Undefined when the read was cut short (a stop): nothing is looked up then.
 */
export type DecisionsLookup = (keys: ReadonlySet<string>) => Promise<Iterable<PasskEvent> | undefined>;

/** Forgets what the store checked and decided on a partition (its book is dropped or restored anew). */
export const forgetChecks = (store: GateStore, partition: number): void => {
  const prefix = `${partition}${KEY_SEP}`;
  for (const k of store.checked) if (k.startsWith(prefix)) store.checked.delete(k);
  for (const [id, x] of store.pending) if (x.partition === partition) store.pending.delete(id);
};

/** The open comparisons of the owned books the log was not looked up for yet (forgetting decided ids). */
const uncheckedOf = (store: GateStore): { partition: number; id: string; key: string }[] => {
  const out: { partition: number; id: string; key: string }[] = [];
  if (!store.forgetDecided) return out;
  for (const [partition, b] of store.books)
    for (const [id, c] of Object.entries(b.comparisons))
      if (!store.checked.has(checkKey(partition, id)))
        out.push({ partition, id, key: candidateKey(c.declared.suite, c.declared.candidate) });
  return out;
};

/**
 * Looks the log up for the open comparisons not checked yet (forgetting decided ids: docs/processors.md, "Decided ids
 * stay in the log"): their candidates' records of passk.decisions, read by key (`lookup`). One a verdict follows in
 * the log (`decidedInLog`), or one this process decided and has not read back (`pending`), is decided already: it
 * leaves the live book, and the partition's prefix too when the log says so (never on `pending` alone: a snapshot
 * must not claim a verdict the log may not hold). The others are checked, their candidates' verdict ids loaded (the
 * log's and the pending ones) for `repeated_verdict`. A read cut short checks nothing (they wait for the next step).
 */
export const checkDecided = async (store: GateStore, lookup: DecisionsLookup): Promise<void> => {
  const unchecked = uncheckedOf(store);
  if (unchecked.length === 0) return;
  const records = await lookup(new Set(unchecked.map((u) => u.key)));
  if (!records) return;
  const byKey = new Map<string, PasskEvent[]>();
  for (const e of records) {
    if (e.type !== 'ComparisonDeclared' && e.type !== 'ConfirmationRequested' && e.type !== 'GateEvaluated') continue;
    const key = candidateKey(e.suite, e.candidate);
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(e);
  }
  const dropped = new Set<GateBook>();
  for (const u of unchecked) {
    const b = store.books.get(u.partition);
    if (!b?.comparisons[u.id]) continue;
    const log = decidedInLog(byKey.get(u.key) ?? [], u.id, u.key);
    const pending = [...store.pending.entries()].filter(([, x]) => x.partition === u.partition && x.key === u.key);
    if (log.decided || pending.some(([, x]) => x.id === u.id)) {
      delete b.comparisons[u.id];
      if (log.decided) delete store.prefixes.get(u.partition)?.book.comparisons[u.id];
      dropped.add(b);
      continue;
    }
    store.checked.add(checkKey(u.partition, u.id));
    const held = b.verdicts[u.key] ?? [];
    b.verdicts[u.key] = [...new Set([...log.verdicts, ...held, ...pending.map(([eventId]) => eventId)])];
  }
  for (const b of dropped) releaseVerdicts(b);
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
  if (store.forgetDecided && !o.lookupDecided) throw new Error('gates forgetting decided ids need lookupDecided');
  const touched = applyGateInput(store, input, o.producer);
  // forgetting decided ids: the log is looked up for new open comparisons first (a step that does holds the next)
  if (o.lookupDecided && uncheckedOf(store).length > 0)
    return checkDecided(store, o.lookupDecided).then(() => afterChecks(store, input, touched, o));
  return afterChecks(store, input, touched, o);
};

/** The rest of a step once the log was looked up: reload what it pins, then decide. */
const afterChecks = (
  store: GateStore,
  input: GateInput,
  touched: Touched,
  o: GateDecisionOptions,
): DecidedGates | Promise<DecidedGates> => {
  // only a declaration (decisions), a restore (tick) or a production window can pin an evicted version; outlined,
  // a row state can name one evicted that a window pins already
  const mayPin =
    input.source === 'decisions' ||
    input.source === 'tick' ||
    touched.windows === 'all' ||
    touched.windows.size > 0 ||
    (store.outlined && touched.versions !== 'all' && [...touched.versions].some((k) => store.evicted.has(k)));
  if (mayPin && store.outlined) {
    // outlined: the versions open comparisons name are named evicted unless loaded or fresh (the reload tells), and
    // those of agents with production windows once, from the log's version list
    const agents = unexpandedAgents(store);
    if (agents.size > 0 && !o.rowstateVersions)
      throw new Error('gates restored from the outline with windows need rowstateVersions');
    nameEvicted(store);
    if (agents.size > 0)
      return o.rowstateVersions!().then((versions) => {
        if (versions) expandAgents(store, agents, versions);
        return reloadAndDecide(store, input, touched, o, mayPin);
      });
  }
  return reloadAndDecide(store, input, touched, o, mayPin);
};

/** The rest of a step once the log was looked up (and, outlined, the agents expanded): reload what it pins, decide. */
const reloadAndDecide = (
  store: GateStore,
  input: GateInput,
  touched: Touched,
  o: GateDecisionOptions,
  mayPin: boolean,
): DecidedGates | Promise<DecidedGates> => {
  const none = new Set<string>();
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
