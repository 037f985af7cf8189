import {
  concatMap,
  defer,
  EMPTY,
  endWith,
  finalize,
  from,
  map,
  merge,
  Subject,
  switchMap,
  type Observable,
} from 'rxjs';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import { EventTooLarge } from '../../schemas/errors.ts';
import type { RunClosed } from '../../schemas/events/comparisons.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { candidateKey, KEY_SEP, TOPICS, type Topic } from '../../schemas/topics.ts';
import { commitWhenDurable } from '../operators/commitWhenDurable.ts';
import {
  addClosed,
  applyRowstate,
  createGateStore,
  decideGates,
  forgetChecks,
  restoreKeys,
  restoreOutline,
  type GateStore,
  type GateDecisionOptions,
  type GateInput,
  type ClosedReload,
  type DecisionsLookup,
  type RowReload,
} from '../operators/decideGates.ts';
import { versionKeyOf } from '../folds/versionSummary.ts';
import { emitChanges } from '../operators/emitChanges.ts';
import { cloneBook, foldPrefix, restorePrefix, usableSnapshot } from '../folds/gateSnapshot.ts';
import { createInFlight } from '../operators/inFlight.ts';
import { ownStop } from '../operators/onStop.ts';
import { pullBatches } from '../operators/pullBatches.ts';
import { readToEnd } from '../operators/readToEnd.ts';
import type { PartitionOf } from '../operators/rowStore.ts';
import type { RowstateFeed } from '../operators/rowstateFeed.ts';
import { tailTopic, type TailedTopic } from '../operators/tailTopic.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { EventConsumer, EventSource } from '../ports.ts';
import type { DecisionProgress, EventPorts, TopologyOptions } from './eventPorts.ts';
import { isIdle, openConsumer } from './runner.ts';

export interface GateTopologyOptions extends TopologyOptions {
  readonly minAttempts?: number;
  readonly partitionOf: PartitionOf;
  readonly alert?: GateDecisionOptions['alert'];
  /**
   * passk.rowstate handed over in process by the trials and windows topologies of this process: the row table is
   * fed from their folds rather than read back through the log, until the feed turns partial (another member
   * writes some of the topic); then the topic is tailed too. Without it, the topic is tailed.
   */
  readonly rowstate?: RowstateFeed;
  /** Records of an owned partition of passk.decisions between its snapshots. @default 20000 */
  readonly snapshotEvery?: number;
  /** The log's largest record (`maxEventBytes`): a larger snapshot is written in chunks. @default 1000000 */
  readonly snapshotBytes?: number;
  /**
   * The horizon of the gate books and closed runs, in ms of event time (`PASSK_GATE_HORIZON_DAYS`; 0: none).
   * @default 0
   */
  readonly horizonMs?: number;
  /**
   * Eviction of the row tables (docs/processors.md, "Evicting versions from the row tables"): a version no open
   * comparison of an owned book names and no production window pins is dropped from memory once a decided
   * comparison named it, or once its newest row state is `evictIdleMs` older (event time) than the newest of any
   * version, and read again from passk.rowstate before a decision needs it. Absent: every version stays loaded.
   */
  readonly evictIdleMs?: number;
  /**
   * The books forget decided ids and look them up in passk.decisions by key before deciding (docs/processors.md,
   * "Decided ids stay in the log"): their memory and snapshots hold open comparisons only. Without a horizon only.
   * @default whether the log reads passk.decisions by key from an index (`EventSource.readsByKey`: the embedded log;
   * Kafka, which would scan the topic for each look-up, keeps the ids)
   */
  readonly forgetDecided?: boolean;
  /**
   * Where the books keep decided ids (no `forgetDecided`, no horizon: Kafka), the ids horizon in ms
   * (`PASSK_GATE_ID_HORIZON_DAYS`, docs/processors.md, "The ids horizon"): a decided comparison's id and its verdict's
   * id leave the books once a comparison was declared this long after the verdict (on the declarations' own event
   * time). Nothing else is dropped. 0: kept for ever. @default 0 (`passk process` passes the config's, 7 days)
   * Without a horizon it is also the alerts horizon, on both backends (`FoldOptions.alertHorizonMs`).
   */
  readonly idHorizonMs?: number;
}

/**
 * passk.decisions (owned: a candidate's comparisons) + passk.rowstate, passk.datasets and the closed
 * runs of passk.decisions (followed whole, as global tables: a RunClosed is keyed by its own version,
 * so it may sit on a partition another instance owns) → confirmation requests and gate verdicts →
 * passk.decisions + store → commit.
 * The books are restored by re-reading the owned partitions of passk.decisions to their end, so a
 * verdict already published is known before anything is decided again. Its decisions consumer is
 * opened only once both tables are loaded, and units may carry no position (a table changed), so it
 * uses the runner's pieces rather than `runTopology`.
 *
 *   tailTopic(rowstate) ─┐  (or the RowstateFeed of this process's trials and windows)
 *   tailTopic(datasets) ─┤
 *  tailTopic(decisions) ─┼▶ decideGates ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 *   pullBatches(decisions)┘
 */
/** A tail started once `after` resolves: its batches, load and catching up follow it from then. */
const startedAfter = (after: Promise<unknown>, start: () => Promise<TailedTopic>): TailedTopic => {
  let started: TailedTopic | undefined;
  const tailed = after.then(start).then((t) => (started = t));
  return {
    batches$: from(tailed).pipe(switchMap((t) => t.batches$)),
    loaded: tailed.then((t) => t.loaded),
    caughtUp: async () => (started ? started.caughtUp() : false),
  };
};

/**
 * The closed runs snapshots hold, into the store's global table: the keys one left out (`closed_evicted`) are marked
 * evicted first (none of their runs is kept until a reload), and the clock takes each one's `closed_at`.
 */
export const applyClosed = (store: GateStore, snapshots: readonly GateBookSnapshot[]): void => {
  for (const x of snapshots) {
    for (const key of x.closed_evicted ?? []) {
      store.closedEvicted.add(key);
      store.closed.delete(key);
    }
    store.closedAt = Math.max(store.closedAt, x.closed_at ?? 0);
  }
  for (const x of snapshots) for (const run of x.closed) addClosed(store, run);
};

/**
 * Every record of passk.decisions under one of the keys, handed to `onEvent` in log order per partition, every
 * partition from 0 to the end the read sees when it starts: the records under other keys are skipped undecoded (on the
 * embedded log they are not read at all: each key's records by its index, not a scan of the topic).
 */
const readDecisionKeys = (
  source: EventSource,
  keys: ReadonlySet<string>,
  groupId: string,
  stop: Promise<unknown> | undefined,
  onEvent: (event: PasskEvent) => void,
): Promise<number> =>
  readToEnd(source, {
    topic: TOPICS.decisions,
    groupId,
    stop,
    keys: (key) => keys.has(key),
    keyPrefixes: [...keys],
    onEvent,
  });

/**
 * Evicted closed runs read again: every RunClosed of passk.decisions under one of the keys (suite␟agent version),
 * read by key (`readDecisionKeys`). A stop cuts it short (the caller then reloads nothing).
 */
export const readClosedRuns = async (
  source: EventSource,
  keys: ReadonlySet<string>,
  groupId: string,
  stop?: Promise<unknown>,
): Promise<RunClosed[]> => {
  const runs: RunClosed[] = [];
  await readDecisionKeys(source, keys, groupId, stop, (event) => {
    if (event.type === 'RunClosed' && keys.has(candidateKey(event.suite, event.agent_version))) runs.push(event);
  });
  return runs;
};

/**
 * A candidate's records of passk.decisions read by key (the books that forget decided ids look them up before they
 * decide): every record under one of the keys (`readDecisionKeys`). A stop cuts it short (the caller then looks
 * nothing up).
 */
export const readDecisionsByKey = async (
  source: EventSource,
  keys: ReadonlySet<string>,
  groupId: string,
  stop?: Promise<unknown>,
): Promise<PasskEvent[]> => {
  const out: PasskEvent[] = [];
  await readDecisionKeys(source, keys, groupId, stop, (event) => void out.push(event));
  return out;
};

/**
 * Evicted versions read again: every record of passk.rowstate under one of their rows' keys (the others are skipped
 * undecoded; on the embedded log they are not read at all: its index by key), to the end the read sees when it starts; what arrives after is staged by the store. Every record the
 * gates were handed is durable there first, so the reload is never older than what was evicted (but for Kafka's
 * compaction over a fenced owner's late write: docs/processors.md). A stop cuts it short (the caller then reloads
 * nothing).
 */
export const readRowStates = async (
  source: EventSource,
  versions: ReadonlySet<string>,
  groupId: string,
  stop?: Promise<unknown>,
): Promise<RowStateChanged[]> => {
  const prefixes = [...versions].map((v) => v + KEY_SEP);
  const states: RowStateChanged[] = [];
  await readToEnd(source, {
    topic: TOPICS.rowstate,
    groupId,
    stop,
    keys: (key) => prefixes.some((p) => key.startsWith(p)),
    keyPrefixes: prefixes,
    onEvent: (event) => {
      if (event.type === 'RowStateChanged' && versions.has(versionKeyOf(event))) states.push(event);
    },
  });
  return states;
};

/**
 * The row table's restore when the gates evict (docs/processors.md, "Evicting versions from the row tables"):
 * passk.rowstate read to its end for its snapshots alone (gate books, production windows) into the store, every row
 * state skipped undecoded and its version marked evicted (`restoreKeys`; on the embedded log from the topic's outline,
 * no key walked and no version named: `restoreOutline`, every version not loaded is evicted). Returns the end it read to, per partition: where the tail starts.
 */
export const restoreSnapshotsOnly = async (
  source: EventSource,
  store: GateStore,
  groupId: string,
  stop?: Promise<unknown>,
): Promise<Map<number, number>> => {
  const ends = new Map<number, number>();
  const none = { versions: new Set<string>(), windows: new Set<string>() };
  // the embedded log: the other keys from its index (no version named: every version not loaded is evicted, the
  // store `outlined`), their records read by key, to the ends of the same read; Kafka: every key walked (`restoreKeys`)
  const outline = await source.rowstateOutline?.({ versions: false });
  const keys = outline ? restoreOutline(store, outline) : restoreKeys(store);
  await readToEnd(source, {
    topic: TOPICS.rowstate,
    groupId,
    stop,
    keys,
    // from the latest record of each snapshot key on (`oddFrom`): its earlier ones are snapshots it supersedes
    ...(outline && { upTo: outline.ends, keyPrefixes: outline.odd, ...(outline.oddFrom && { from: outline.oddFrom }) }),
    onEnds: (highs) => {
      for (const [p, end] of highs) ends.set(p, end);
    },
    onEvent: (event) => applyRowstate(store, [event], none),
  });
  return ends;
};

export const gateTopology = (ports: EventPorts, o: GateTopologyOptions): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-gates';
  const store = createGateStore({
    horizonMs: o.horizonMs ?? 0,
    forgetDecided: o.forgetDecided ?? ports.source.readsByKey?.includes(TOPICS.decisions) ?? false,
    idHorizonMs: o.idHorizonMs ?? 0,
  });
  const inFlight = createInFlight(o.maxInFlight ?? 20_000);
  /**
   * Each record on its own, a chunked snapshot's chunks in order: a crash between them leaves a set a restore does
   * not use (the previous complete snapshot is in the other slot). A record the log still refuses (one entry over
   * its largest event) ends that snapshot: it is not written, the partition's restore reads from the previous one's
   * offset, or from 0 (slower, never wrong), its slot is given back, and the other partitions' are still written.
   */
  const publishSnapshots = async (snapshots: readonly GateBookSnapshot[]): Promise<void> => {
    const refused = new Set<string>();
    for (const x of snapshots) {
      const id = x.chunk?.snapshot_id ?? x.event_id;
      if (refused.has(id)) continue;
      await ports.publisher.publish([x], { trusted: true }).catch((e: unknown) => {
        if (!(e instanceof EventTooLarge)) throw e;
        refused.add(id);
        if (x.chunk) store.bookShelf.slots.set(x.partition, x.chunk.slot === 'a' ? 'b' : 'a');
      });
    }
  };
  return defer(() => {
    const own = ownStop(o.stop);
    const stop = own.promise;
    const ticks = new Subject<GateInput>();
    let stopping = false;
    void stop.then(() => {
      stopping = true;
      ticks.complete();
    });
    /** A global table's tail: the whole topic, from 0 or from where `from` says per partition. */
    const tail = (topic: Topic, from?: ReadonlyMap<number, number>) =>
      tailTopic(ports.source, {
        topic,
        groupId: `${groupId}.${topic}.${o.instanceId}`,
        inFlight,
        stop,
        ...(from ? { from } : {}),
      });
    /** The row table from the feed: applied as it is pushed, decided at once; the topic tailed once partial. */
    const fed = (feed: RowstateFeed): TailedTopic => {
      const unfollow = feed.follow((events, states) => {
        const touched = { versions: new Set<string>(), windows: new Set<string>() };
        applyRowstate(store, events, touched, states);
        // not yet merged (the decisions restore's tick decides everything then) or stopping (the next start does)
        if (stopping || !ticks.observed) return;
        inFlight.acquire(1); // released when what it decides is durable (its weight)
        ticks.next({ source: 'local', touched });
      });
      void stop.then(unfollow);
      const partial = Promise.race([feed.partial.then(() => true), stop.then(() => false)]).then((go) =>
        go && !stopping ? tail(TOPICS.rowstate) : undefined,
      );
      return {
        batches$: from(partial).pipe(switchMap((t) => t?.batches$ ?? EMPTY)),
        loaded: Promise.race([feed.loaded, partial.then((t) => t?.loaded)]),
        caughtUp: async () => !feed.isPartial() || ((await (await partial)?.caughtUp()) ?? true),
      };
    };
    const openDecisions = () =>
      openConsumer(
        {
          source: ports.source,
          groupId,
          topic: TOPICS.decisions,
          maxBatch: o.maxBatch,
          inFlight,
          restore: async (partitions, { consumer, stopping: stopped }) => {
            const owned = new Set(partitions);
            const lag = (await consumer.lag()).filter((l) => l.topic === TOPICS.decisions);
            const committed = await consumer.committed(TOPICS.decisions);
            store.decisionPartitions = lag.length;
            // each owned partition from its latest snapshot (or 0), folded to the end; the others are not read
            const from = new Map<number, number>();
            for (const l of lag) {
              const high = (committed.get(l.partition) ?? 0) + l.lag;
              if (!owned.has(l.partition)) {
                from.set(l.partition, high);
                continue;
              }
              const snapshot = usableSnapshot(
                store.bookSnapshots.get(l.partition),
                lag.length,
                high,
                store.horizonMs,
                store.forgetDecided,
                o.idHorizonMs ?? 0, // as configured: the ids horizon (where ids are kept) and the alerts horizon
              );
              const prefix = restorePrefix(snapshot, store.horizonMs, store.forgetDecided, o.idHorizonMs ?? 0);
              store.prefixes.set(l.partition, prefix);
              forgetChecks(store, l.partition); // its comparisons are looked up again before they decide
              if (prefix.through > 0) from.set(l.partition, prefix.through);
            }
            await readToEnd(ports.source, {
              topic: TOPICS.decisions,
              groupId: `${groupId}.restore.${o.instanceId}`,
              from,
              stop,
              onEvent: (event, p, offset) => {
                const prefix = owned.has(p) ? store.prefixes.get(p) : undefined;
                if (prefix) foldPrefix(prefix, [{ offset, event }], offset);
              },
            });
            // a read a stop cut short (its end, or a backend away after the stop: cutByStop) folded part of the log: a
            // book from it would decide a comparison whose verdict lies further down again, in a step still pending
            // (a tick waiting on a reload); the next start restores the whole log
            if (stopped()) return;
            // the live book starts as the log's fold; it then also holds what it decides before reading it back
            for (const p of owned) store.books.set(p, cloneBook(store.prefixes.get(p)!.book));
            ticks.next({ source: 'tick' }); // decide what the restored books and loaded tables already complete
          },
          drop: (revoked) => {
            for (const p of revoked) {
              store.books.delete(p);
              store.prefixes.delete(p);
              forgetChecks(store, p);
            }
          },
        },
        stop,
      );
    let reloads = 0;
    const reload: RowReload = async (versions) => {
      // a group of its own per reload: a member of the last one whose leave was lost cannot hold this one's join
      // for a session timeout (the group is transient: deleted when the read ends)
      const states = await readRowStates(
        ports.source,
        versions,
        `${groupId}.reload.${o.instanceId}.${++reloads}`,
        stop,
      );
      return stopping ? undefined : states;
    };
    const lookupDecided: DecisionsLookup = async (keys) => {
      const records = await readDecisionsByKey(
        ports.source,
        keys,
        `${groupId}.lookup.${o.instanceId}.${++reloads}`,
        stop,
      );
      return stopping ? undefined : records;
    };
    // an outlined store's version list (production windows' agents), from the same outline with its versions
    const rowstateVersions = ports.source.rowstateOutline
      ? async () => {
          const { versions } = await ports.source.rowstateOutline!();
          return stopping ? undefined : versions;
        }
      : undefined;
    const reloadClosed: ClosedReload = async (keys) => {
      const runs = await readClosedRuns(ports.source, keys, `${groupId}.reload.${o.instanceId}.${++reloads}`, stop);
      return stopping ? undefined : runs;
    };
    /**
     * The row table restored evicting (a tail, eviction on): passk.rowstate read to its end for its snapshots only, every
     * row state skipped undecoded and its version marked evicted (`restoreKeys`), then tailed from that end. The
     * restore's tick reloads what the restored books and windows pin before it decides (`reloadPinned`), so a restore
     * decodes only the versions open comparisons and windows need, not the history.
     */
    const restoredEvicted = async (): Promise<TailedTopic> => {
      const from = await restoreSnapshotsOnly(
        ports.source,
        store,
        `${groupId}.${TOPICS.rowstate}.restore.${o.instanceId}`,
        stop,
      );
      // cut short by a stop: never loaded (nothing decides)
      if (stopping) return { batches$: EMPTY, loaded: new Promise<void>(() => {}), caughtUp: async () => false };
      return tail(TOPICS.rowstate, from);
    };
    const rowTable = o.rowstate
      ? Promise.resolve(fed(o.rowstate))
      : o.evictIdleMs === undefined
        ? tail(TOPICS.rowstate)
        : restoredEvicted();
    /**
     * The closed runs of every partition: those the partitions' latest snapshots hold (passk.rowstate, read with
     * the row table), then each partition from the offset its snapshot covers. So the row table is loaded first.
     */
    const closedRuns = async (): Promise<TailedTopic> => {
      const snapshots = [...store.bookSnapshots.values()];
      // one layout only: snapshots of another partition count (a topic re-created) are not used, nor one pruned
      // with a shorter horizon (its partition is read from 0)
      const layout = snapshots.every((x) => x.partitions === snapshots[0]?.partitions) ? snapshots : [];
      const usable = layout.filter((x) =>
        usableSnapshot(x, x.partitions, Infinity, store.horizonMs, store.forgetDecided, o.idHorizonMs ?? 0),
      );
      const from = new Map<number, number>();
      for (const x of usable) from.set(x.partition, x.through_offset);
      applyClosed(store, usable);
      return tail(TOPICS.decisions, from);
    };
    return from(Promise.all([rowTable, tail(TOPICS.datasets)])).pipe(
      switchMap(([rows, datasets]) => {
        // started once the row table (read as it flows below) has loaded the snapshots
        const closed = startedAfter(Promise.race([rows.loaded, stop]), closedRuns);
        let decisions: EventConsumer | undefined;
        const stopped = stop.then(() => 'stopped' as const);
        const tables = Promise.all([rows.loaded, datasets.loaded, closed.loaded]);
        const decisions$ = from(Promise.race([tables, stopped])).pipe(
          switchMap((ready) => (ready === 'stopped' ? EMPTY : from(openDecisions()))),
          switchMap((consumer) => {
            decisions = consumer;
            o.onIdleProbe?.(
              async () =>
                (await isIdle(consumer, inFlight)) &&
                (await rows.caughtUp()) &&
                (await datasets.caughtUp()) &&
                (await closed.caughtUp()),
            );
            return pullBatches(consumer.batches(), inFlight, stop).pipe(
              map((batch): GateInput => ({ source: 'decisions', batch })),
              endWith<GateInput>({ source: 'final' }), // a clean stop snapshots what was folded since the last
              finalize(() => void consumer.close()),
            );
          }),
        );
        return merge(
          ticks,
          rows.batches$.pipe(map((batch): GateInput => ({ source: 'rowstate', batch }))),
          datasets.batches$.pipe(map((batch): GateInput => ({ source: 'datasets', batch }))),
          closed.batches$.pipe(map((batch): GateInput => ({ source: 'closed', batch }))),
          decisions$,
        ).pipe(
          decideGates(store, {
            producer: o.producer,
            partitionOf: o.partitionOf,
            ...(o.snapshotEvery ? { snapshotEvery: o.snapshotEvery } : {}),
            ...(o.snapshotBytes ? { snapshotBytes: o.snapshotBytes } : {}),
            ...(o.minAttempts ? { minAttempts: o.minAttempts } : {}),
            ...(o.alert ? { alert: o.alert } : {}),
            // the reloads are wired with eviction off too: a restore may find versions or closed runs an evicting
            // run left out (a snapshot's closed_evicted), which only a reload brings back before a decision reads them
            reload,
            reloadClosed,
            ...(store.forgetDecided ? { lookupDecided } : {}),
            ...(rowstateVersions ? { rowstateVersions } : {}),
            ...(o.evictIdleMs === undefined ? {} : { evict: { idleMs: o.evictIdleMs } }),
          }),
          emitChanges(
            (events) => ports.publisher.publish(events),
            (u) => u.emitted,
          ),
          concatMap(async (u) => {
            await publishSnapshots(u.snapshots);
            return u;
          }),
          writeRows(async (u) => {
            await ports.sink.writeEvents(u.emitted.filter((e) => e.type !== 'ConfirmationRequested'));
            if (u.windows.length > 0) await ports.sink.writeWindows(u.windows);
          }),
          commitWhenDurable(
            (positions) => (positions.length === 0 || !decisions ? Promise.resolve() : decisions.commit(positions)),
            inFlight,
            o.isCommitRejected,
          ),
          map((u) => ({ committed: u.committed, emitted: u.emitted })),
        );
      }),
      finalize(() => {
        own.release();
        own.request();
      }),
    );
  });
};
