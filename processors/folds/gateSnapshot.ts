import type { RunClosed } from '../../schemas/events/comparisons.ts';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { candidateKey } from '../../schemas/topics.ts';
import { maxOf } from '../core/arrays.ts';
import {
  alertsHorizon,
  emptyBook,
  foldBookInto,
  idsHorizon,
  isDecision,
  pastHorizon,
  processorsFold,
  pruneBook,
  type GateBook,
} from './gates.ts';

/**
 * One partition of passk.decisions folded from the log alone (its records before `through`, nothing else): what a
 * snapshot holds. The processors' live book also holds what they decided and have not read back yet; a snapshot of
 * that could claim a decision the log lost in a crash, so the snapshot is taken of this fold, which only the
 * partition's records feed. Pure: the same records give the same prefix, however they were batched or restored.
 */
export interface DecisionsPrefix {
  readonly book: GateBook;
  /** The partition's RunClosed by event id (but those of `closedEvicted`). */
  readonly closed: Map<string, RunClosed>;
  /**
   * suite␟agent version keys whose closed runs the gates evicted (`evictClosed`): their runs are not held nor kept
   * from then on, and the snapshot names them (`closed_evicted`) so a restore marks them evicted and reloads them
   * from the log when a comparison names them.
   */
  readonly closedEvicted: Set<string>;
  /** Records before this offset are folded in. */
  through: number;
  /** The latest event time folded (the snapshot's `occurred_at`). */
  at: number;
  /** Records folded since the last snapshot was taken (or restored). */
  since: number;
  /** The horizon of the book and the closed runs, in ms of event time (0: none; `FoldOptions.horizonMs`). */
  readonly horizonMs: number;
  /**
   * The clock of the closed runs: the latest event time of a RunClosed folded (so the newest run held). A run is
   * dropped once runs closed `horizonMs` after it, never because a declaration came later: a comparison with an old
   * baseline still finds its runs while no newer ones push them out.
   */
  closedAt: number;
  /**
   * The book forgets decided ids (`FoldOptions.forgetDecided`: the gates look them up in the log by key); its
   * snapshots say so (`forgot_decided`), and only a restore that forgets too may start from one.
   */
  readonly forgetDecided: boolean;
  /**
   * The ids horizon (`FoldOptions.idHorizonMs`: no horizon, ids kept): decided and verdict ids are dropped once a
   * declaration came this long after them; its snapshots say so (`id_horizon_ms`). 0: none, or not this kind of book.
   */
  readonly idHorizonMs: number;
  /**
   * The alerts horizon (`FoldOptions.alertHorizonMs`: no horizon, both backends): alert ids are dropped once an alert
   * came this long after them; its snapshots say so (`alert_horizon_ms`). 0: none.
   */
  readonly alertHorizonMs: number;
}

/**
 * A copy of a book that shares nothing with it: what `structuredClone` gives for a book (plain JSON values only: the
 * schema's), made by a walk of its objects and arrays. `structuredClone` serializes and deserializes, a fixed cost of
 * a few µs that was most of `restorePrefix` on a snapshot of a few comparisons' ids.
 */
export const cloneBook = (book: GateBook): GateBook => copyPlain(book) as GateBook;

const copyPlain = (v: unknown): unknown => {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(copyPlain);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = copyPlain((v as Record<string, unknown>)[k]);
  return out;
};

/** The ids horizon a prefix or store folds with: only without a horizon and when ids are kept (`idsHorizon`). */
export const ownIdHorizon = (horizonMs = 0, forgetDecided = false, idHorizonMs = 0): number =>
  horizonMs > 0 ? 0 : idsHorizon(horizonMs, forgetDecided, idHorizonMs);

export const emptyPrefix = (horizonMs = 0, forgetDecided = false, idHorizonMs = 0): DecisionsPrefix => ({
  book: emptyBook(),
  closed: new Map(),
  closedEvicted: new Set(),
  through: 0,
  at: 0,
  since: 0,
  horizonMs,
  closedAt: 0,
  forgetDecided: forgetDecided && horizonMs <= 0,
  idHorizonMs: ownIdHorizon(horizonMs, forgetDecided, idHorizonMs),
  alertHorizonMs: alertsHorizon(horizonMs, idHorizonMs),
});

/**
 * Folds records of the partition into the prefix: those before `through` are in it already (a redelivery after a
 * restore) and are skipped; `lastOffset` (the batch's, dead-lettered records included) moves `through` on.
 */
export const foldPrefix = (
  s: DecisionsPrefix,
  records: Iterable<{ readonly offset: number; readonly event: PasskEvent }>,
  lastOffset: number,
): void => {
  const o = processorsFold(s.horizonMs, s.forgetDecided, s.idHorizonMs, s.alertHorizonMs);
  for (const { offset, event } of records) {
    if (offset < s.through) continue;
    if (isDecision(event)) {
      foldBookInto(s.book, event, o);
      if (event.type === 'RunClosed') {
        s.closedAt = Math.max(s.closedAt, event.occurred_at);
        if (
          !pastHorizon(s.closedAt, event.occurred_at, s.horizonMs) &&
          !s.closedEvicted.has(candidateKey(event.suite, event.agent_version))
        )
          s.closed.set(event.event_id, event);
      }
    }
    s.at = Math.max(s.at, event.occurred_at);
    s.since++;
    // memory follows the horizon between snapshots too (pruning changes no read, so when it runs is free)
    if ((s.horizonMs > 0 || s.idHorizonMs > 0 || s.alertHorizonMs > 0) && s.since % PRUNE_EVERY === 0) prunePrefix(s);
  }
  s.through = Math.max(s.through, lastOffset + 1);
};

/** Drops, in place, the closed runs of evicted keys from a prefix, and marks the keys evicted there for good. */
export const evictPrefixClosed = (s: DecisionsPrefix, keys: readonly string[]): void => {
  for (const key of keys) s.closedEvicted.add(key);
  for (const [id, run] of s.closed)
    if (s.closedEvicted.has(candidateKey(run.suite, run.agent_version))) s.closed.delete(id);
};

/** Records folded between two prunes of a prefix with a horizon: its cost (a walk of what it holds) spread thin. */
export const PRUNE_EVERY = 1_000;

/**
 * Drops, in place, what lies past the prefix's horizon: the book's old ids (`pruneBook`) and the closed runs older
 * than the newest by more than it. Nothing a fold reads changes (both are hidden already): the snapshot and memory stop growing with history.
 */
export const prunePrefix = (s: DecisionsPrefix): void => {
  pruneBook(s.book, s.horizonMs, s.idHorizonMs, s.alertHorizonMs);
  for (const [id, run] of s.closed) if (pastHorizon(s.closedAt, run.occurred_at, s.horizonMs)) s.closed.delete(id);
};

/** What a prefix holds, in ids: open comparisons, decided ids, verdict ids, alerts, adaptive runs and closed runs. */
export const heldIds = (s: DecisionsPrefix): number =>
  Object.keys(s.book.comparisons).length +
  Object.keys(s.book.decided ?? {}).length +
  Object.values(s.book.verdicts).reduce((n, ids) => n + ids.length, 0) +
  Object.keys(s.book.alerts).length +
  Object.values(s.book.adaptive ?? {}).reduce((n, runs) => n + Object.keys(runs).length, 0) +
  s.closed.size;

/** The snapshot of a prefix, pruned to its horizon first (a copy: the prefix goes on folding while it is published). */
export const toGateBookSnapshot = (
  s: DecisionsPrefix,
  partition: number,
  partitions: number,
  producer: string,
): GateBookSnapshot => {
  prunePrefix(s);
  return {
    event_id: deterministicEventId(s.at, 'GateBookSnapshot', partition, partitions, s.through),
    type: 'GateBookSnapshot',
    schema_version: 2,
    occurred_at: s.at,
    producer,
    partition,
    partitions,
    through_offset: s.through,
    horizon_ms: s.horizonMs,
    book: cloneBook(s.book),
    closed: [...s.closed.values()],
    // the clock of the closed runs, which the runs held may no longer show; the keys left out
    ...(s.closedEvicted.size > 0 ? { closed_at: s.closedAt, closed_evicted: [...s.closedEvicted].sort() } : {}),
    ...(s.forgetDecided ? { forgot_decided: true as const } : {}),
    ...(s.idHorizonMs > 0 ? { id_horizon_ms: s.idHorizonMs } : {}),
    ...(s.alertHorizonMs > 0 ? { alert_horizon_ms: s.alertHorizonMs } : {}),
  };
};

/**
 * The prefix a snapshot holds (its own copy), or an empty one; folded on with the given horizon. Forgetting decided
 * ids, a snapshot that kept them (`forgot_decided` absent) is restored without them: its decided ids and verdict ids.
 */
export const restorePrefix = (
  snapshot?: GateBookSnapshot,
  horizonMs = 0,
  forgetDecided = false,
  idHorizonMs = 0,
): DecisionsPrefix =>
  snapshot
    ? {
        book: forgetful(cloneBook(snapshot.book), forgetDecided && horizonMs <= 0),
        closed: new Map(snapshot.closed.map((r) => [r.event_id, r])),
        closedEvicted: new Set(snapshot.closed_evicted ?? []),
        through: snapshot.through_offset,
        at: snapshot.occurred_at,
        since: 0,
        horizonMs,
        closedAt: Math.max(0, snapshot.closed_at ?? 0, maxOf(snapshot.closed.map((r) => r.occurred_at))),
        forgetDecided: forgetDecided && horizonMs <= 0,
        idHorizonMs: ownIdHorizon(horizonMs, forgetDecided, idHorizonMs),
        alertHorizonMs: alertsHorizon(horizonMs, idHorizonMs),
      }
    : emptyPrefix(horizonMs, forgetDecided, idHorizonMs);

/** A book without what a forgetting fold leaves in the log (its decided ids and verdict ids), when `forget`. */
const forgetful = (book: GateBook, forget: boolean): GateBook => {
  if (!forget) return book;
  delete book.decided;
  book.verdicts = {};
  delete book.verdicts_at;
  return book;
};

/**
 * Whether a snapshot pruned with `taken` holds all a fold with `wanted` keeps (0: no horizon, keeps everything). One
 * folded without a horizon (0, or absent: from before horizons) serves only a restore without one: its entries carry
 * no event time, so under a horizon they would all count as past it.
 */
const holds = (taken: number | undefined, wanted: number): boolean =>
  !taken ? wanted === 0 : wanted > 0 && taken >= wanted;

/**
 * The snapshot of a partition a restore may start from: the latest seen, of the same partition count, covering no
 * more than the partition holds (`high`: its next offset; a log re-created under an old passk.rowstate is replayed
 * from 0), and pruned with a horizon no shorter than the restore's (else it lacks ids the restore would keep: the
 * partition is replayed from 0, once; one folded without a horizon, or from before horizons, serves only a restore
 * without one). One that forgot decided ids (`forgot_decided`) serves only a restore that forgets them too (one
 * that keeps them, Kafka's, would take a decided comparison re-declared for open): the partition is replayed from 0.
 * The ids horizon likewise (`id_horizon_ms`): one pruned with it serves only a restore under an ids horizon no longer
 * (its entries are dated on the declarations' clock), and one folded without it (its ids carry no time) only a restore
 * without one: switching it on or off, or lengthening it, replays each partition from 0 once. The alerts horizon
 * likewise (`alert_horizon_ms`, on both backends, dated on the alerts' clock): a snapshot from before it (its alerts
 * undated) serves only a restore without one, so the upgrade replays each partition from 0 once.
 */
export const usableSnapshot = (
  snapshot: GateBookSnapshot | undefined,
  partitions: number,
  high: number,
  horizonMs = 0,
  forgetDecided = false,
  idHorizonMs = 0,
): GateBookSnapshot | undefined =>
  snapshot &&
  snapshot.partitions === partitions &&
  snapshot.through_offset <= high &&
  holds(snapshot.horizon_ms, horizonMs) &&
  holds(snapshot.id_horizon_ms, ownIdHorizon(horizonMs, forgetDecided, idHorizonMs)) &&
  holds(snapshot.alert_horizon_ms, alertsHorizon(horizonMs, idHorizonMs)) &&
  (!snapshot.forgot_decided || (forgetDecided && horizonMs <= 0))
    ? snapshot
    : undefined;

/** Keeps the latest snapshot per partition (the highest `through_offset`): a compacted topic may hold several. */
export const keepLatest = (into: Map<number, GateBookSnapshot>, s: GateBookSnapshot): void => {
  if ((into.get(s.partition)?.through_offset ?? -1) < s.through_offset) into.set(s.partition, s);
};

/** UTF-8 bytes of a value's JSON: about what the log's codec writes for it (the registry adds a 5-byte header). */
const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '');

/** The part of a record's bytes a chunk's entries may fill: the rest is its envelope, with room to spare. */
const CHUNK_FILL = 0.9;

type BookMap = 'comparisons' | 'verdicts' | 'alerts' | 'decided' | 'adaptive';
const BOOK_MAPS: readonly BookMap[] = ['comparisons', 'verdicts', 'alerts', 'decided', 'adaptive'];

/**
 * A snapshot as the records the log takes (each at most `maxBytes` of JSON): itself when it fits, else chunks that
 * share its id, each with some of the book's entries (a candidate's verdict ids with their times) and closed runs,
 * in order, written under `slot`'s keys. An entry larger than a record on its own makes a chunk on its own, which
 * the log then refuses (the snapshot is not written: `publishSnapshots`). Pure: the same snapshot, bound and slot
 * give the same chunks.
 */
export const chunkSnapshot = (s: GateBookSnapshot, maxBytes: number, slot: 'a' | 'b'): GateBookSnapshot[] => {
  if (jsonBytes(s) <= maxBytes) return [s];
  const empty = (): GateBook => ({
    comparisons: {},
    verdicts: {},
    alerts: {},
    ...(s.book.decided ? { decided: {} } : {}),
    ...(s.book.adaptive ? { adaptive: {} } : {}),
    ...(s.book.verdicts_at ? { verdicts_at: {} } : {}),
    ...(s.book.at === undefined ? {} : { at: s.book.at }),
    ...(s.book.alerts_at === undefined ? {} : { alerts_at: s.book.alerts_at }),
  });
  const envelope = {
    ...s,
    book: empty(),
    closed: [],
    closed_evicted: [],
    chunk: { snapshot_id: s.event_id, index: 0, count: 2, slot },
  };
  const room = Math.floor(maxBytes * CHUNK_FILL) - jsonBytes(envelope) - 64; // indexes and counts grow by digits
  const parts: { book: GateBook; closed: RunClosed[]; evicted: string[] }[] = [];
  let part = { book: empty(), closed: [] as RunClosed[], evicted: [] as string[] };
  let used = 0;
  const add = (bytes: number, put: (p: typeof part) => void) => {
    if (used > 0 && used + bytes > room) {
      parts.push(part);
      part = { book: empty(), closed: [], evicted: [] };
      used = 0;
    }
    put(part);
    used += bytes + 1;
  };
  for (const map of BOOK_MAPS)
    for (const [key, value] of Object.entries(s.book[map] ?? {})) {
      const at = map === 'verdicts' ? s.book.verdicts_at?.[key] : undefined;
      add(jsonBytes(key) + jsonBytes(value) + (at ? jsonBytes(key) + jsonBytes(at) + 2 : 0), (p) => {
        (p.book[map] as Record<string, unknown>)[key] = value;
        if (at) p.book.verdicts_at![key] = at;
      });
    }
  for (const run of s.closed) add(jsonBytes(run), (p) => p.closed.push(run));
  for (const key of s.closed_evicted ?? []) add(jsonBytes(key), (p) => p.evicted.push(key));
  parts.push(part);
  return parts.map((p, index) => ({
    ...s,
    event_id: deterministicEventId(s.occurred_at, 'GateBookSnapshotChunk', s.event_id, parts.length, index),
    book: p.book,
    closed: p.closed,
    ...(s.closed_evicted ? { closed_evicted: p.evicted } : {}),
    chunk: { snapshot_id: s.event_id, index, count: parts.length, slot },
  }));
};

/** The snapshot its chunks (all of them, in any order) were cut from. */
export const joinChunks = (chunks: readonly GateBookSnapshot[]): GateBookSnapshot => {
  const sorted = [...chunks].sort((x, y) => (x.chunk?.index ?? 0) - (y.chunk?.index ?? 0));
  const first = sorted[0]!;
  const book: GateBook = structuredClone({ ...first.book });
  for (const c of sorted.slice(1)) {
    for (const map of BOOK_MAPS)
      if (c.book[map]) Object.assign((book[map] ??= {}) as Record<string, unknown>, c.book[map]);
    if (c.book.verdicts_at) Object.assign((book.verdicts_at ??= {}), c.book.verdicts_at);
  }
  const { chunk: _chunk, ...envelope } = first;
  return {
    ...envelope,
    event_id: first.chunk?.snapshot_id ?? first.event_id,
    book,
    closed: sorted.flatMap((c) => c.closed),
    ...(first.closed_evicted ? { closed_evicted: sorted.flatMap((c) => c.closed_evicted ?? []) } : {}),
  };
};

/**
 * The gate book snapshots read from passk.rowstate, per partition of passk.decisions: the latest complete one
 * (a whole record, or chunks joined once all are read; an incomplete set, a crash between its chunks, is never
 * used, and the previous complete one stays), the records it was read from, and the slot of the latest complete
 * chunked one, which the next chunked snapshot of the partition must not overwrite.
 */
export interface SnapshotShelf {
  /** The latest complete snapshot of each partition (chunks joined): what a restore starts from. */
  readonly latest: Map<number, GateBookSnapshot>;
  /** The records each latest was read from (one, or its chunks): what a handover in process passes on. */
  readonly records: Map<number, readonly GateBookSnapshot[]>;
  /** Chunks of sets not complete yet, by snapshot id and count. */
  readonly pending: Map<string, { partition: number; through: number; parts: (GateBookSnapshot | undefined)[] }>;
  /** The slot of each partition's latest complete chunked snapshot. */
  readonly slots: Map<number, 'a' | 'b'>;
}

export const emptyShelf = (): SnapshotShelf => ({
  latest: new Map(),
  records: new Map(),
  pending: new Map(),
  slots: new Map(),
});

/** The slot a partition's next chunked snapshot is written to: not the latest complete one's. */
export const nextSlot = (shelf: SnapshotShelf, partition: number): 'a' | 'b' =>
  shelf.slots.get(partition) === 'a' ? 'b' : 'a';

/** Takes one GateBookSnapshot record read from passk.rowstate (a whole snapshot or a chunk), in log order. */
export const shelve = (shelf: SnapshotShelf, e: GateBookSnapshot): void => {
  const p = e.partition;
  if ((shelf.latest.get(p)?.through_offset ?? -1) >= e.through_offset) return;
  const hold = (snapshot: GateBookSnapshot, records: readonly GateBookSnapshot[]) => {
    shelf.latest.set(p, snapshot);
    shelf.records.set(p, records);
    for (const [id, set] of shelf.pending)
      if (set.partition === p && set.through <= snapshot.through_offset) shelf.pending.delete(id);
  };
  if (!e.chunk) return hold(e, [e]);
  const id = `${e.chunk.snapshot_id}/${e.chunk.count}`;
  const set = shelf.pending.get(id) ?? { partition: p, through: e.through_offset, parts: Array(e.chunk.count) };
  shelf.pending.set(id, set);
  set.parts[e.chunk.index] = e;
  const parts = set.parts.filter((x): x is GateBookSnapshot => x !== undefined);
  if (parts.length < e.chunk.count) return;
  shelf.slots.set(p, e.chunk.slot);
  hold(joinChunks(parts), parts);
};
