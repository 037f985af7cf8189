import { defer, EMPTY, finalize, from, map, merge, Subject, switchMap, type Observable } from 'rxjs';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS, type Topic } from '../../schemas/topics.ts';
import { commitWhenDurable } from '../operators/commitWhenDurable.ts';
import {
  applyGateInput,
  applyRowstate,
  createGateStore,
  decideGates,
  type GateDecisionOptions,
  type GateInput,
} from '../operators/decideGates.ts';
import { emitChanges } from '../operators/emitChanges.ts';
import { createInFlight } from '../operators/inFlight.ts';
import { ownStop } from '../operators/onStop.ts';
import { pullBatches } from '../operators/pullBatches.ts';
import { readToEnd } from '../operators/readToEnd.ts';
import type { PartitionOf } from '../operators/rowStore.ts';
import type { RowstateFeed } from '../operators/rowstateFeed.ts';
import { tailTopic, type TailedTopic } from '../operators/tailTopic.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { EventConsumer } from '../ports.ts';
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
export const gateTopology = (ports: EventPorts, o: GateTopologyOptions): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-gates';
  const store = createGateStore();
  const inFlight = createInFlight(o.maxInFlight ?? 20_000);
  return defer(() => {
    const own = ownStop(o.stop);
    const stop = own.promise;
    const ticks = new Subject<GateInput>();
    let stopping = false;
    void stop.then(() => {
      stopping = true;
      ticks.complete();
    });
    const tail = (topic: Topic) =>
      tailTopic(ports.source, { topic, groupId: `${groupId}.${topic}.${o.instanceId}`, inFlight, stop });
    /** The row table from the feed: applied as it is pushed, decided at once; the topic tailed once partial. */
    const fed = (feed: RowstateFeed): TailedTopic => {
      const unfollow = feed.follow((events) => {
        const touched = { versions: new Set<string>(), windows: new Set<string>() };
        applyRowstate(store, events, touched);
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
          restore: async (partitions, { consumer }) => {
            const owned = new Set(partitions);
            store.decisionPartitions = (await consumer.lag()).filter((l) => l.topic === TOPICS.decisions).length;
            const replay = new Map<number, PasskEvent[]>();
            await readToEnd(ports.source, {
              topic: TOPICS.decisions,
              groupId: `${groupId}.restore.${o.instanceId}`,
              stop,
              onEvent: (e, p) => void (owned.has(p) && (replay.get(p) ?? replay.set(p, []).get(p)!).push(e)),
            });
            for (const p of owned) {
              const events = (replay.get(p) ?? []).map((event, offset) => ({
                topic: TOPICS.decisions,
                partition: p,
                offset,
                key: '',
                event,
              }));
              applyGateInput(
                store,
                {
                  source: 'decisions',
                  batch: {
                    topic: TOPICS.decisions,
                    partition: p,
                    events,
                    lastOffset: events.length - 1,
                    highWatermark: events.length,
                  },
                },
                o.producer,
              );
            }
            ticks.next({ source: 'tick' }); // decide what the restored books and loaded tables already complete
          },
          drop: (revoked) => {
            for (const p of revoked) store.books.delete(p);
          },
        },
        stop,
      );
    const rowTable = o.rowstate ? Promise.resolve(fed(o.rowstate)) : tail(TOPICS.rowstate);
    return from(Promise.all([rowTable, tail(TOPICS.datasets), tail(TOPICS.decisions)])).pipe(
      switchMap(([rows, datasets, closed]) => {
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
            ...(o.minAttempts ? { minAttempts: o.minAttempts } : {}),
            ...(o.alert ? { alert: o.alert } : {}),
          }),
          emitChanges(
            (events) => ports.publisher.publish(events),
            (u) => u.emitted,
          ),
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
