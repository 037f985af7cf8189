import {
  concatWith,
  defer,
  finalize,
  from,
  ignoreElements,
  switchMap,
  type Observable,
  type SchedulerLike,
} from 'rxjs';
import type { Topic } from '../../schemas/topics.ts';
import { commitWhenDurable, type Committable } from '../operators/commitWhenDurable.ts';
import type { InFlight } from '../operators/inFlight.ts';
import { ownStop } from '../operators/onStop.ts';
import { pullBatches } from '../operators/pullBatches.ts';
import { stopWhenCaughtUp } from '../operators/stopWhenCaughtUp.ts';
import type { EventBatch, EventConsumer, EventSource } from '../ports.ts';

export interface RestoreContext {
  readonly consumer: EventConsumer;
  /** The topology's stop: a restore read ends early on it. */
  readonly stop: Promise<void>;
  /** True once the topology is stopping: what a read returned may then be partial; keep nothing. */
  readonly stopping: () => boolean;
}

/** A group consumer on one topic, and what the topology does when partitions come and go. */
export interface ConsumerSpec {
  readonly source: EventSource;
  readonly groupId: string;
  readonly topic: Topic;
  /** @default 1000 */
  readonly maxBatch?: number | undefined;
  readonly inFlight: InFlight;
  /** Restores the state of newly assigned partitions, before their first batch. Not called once stopping. */
  readonly restore?: (partitions: number[], ctx: RestoreContext) => Promise<void>;
  /** Drops the state of revoked partitions, once everything in flight is durable and committed. */
  readonly drop?: (partitions: number[]) => void;
}

/** Opens the consumer of `spec`; `stop` is the topology's own (see `ownStop`). */
export const openConsumer = async (spec: ConsumerSpec, stop: Promise<void>): Promise<EventConsumer> => {
  let stopping = false;
  void stop.then(() => (stopping = true));
  const ofTopic = (tps: readonly { topic: string; partition: number }[]) =>
    tps.filter((tp) => tp.topic === spec.topic).map((tp) => tp.partition);
  // the callbacks run only while batches() is iterated, after `consumer` is set
  const consumer: EventConsumer = await spec.source.consumer({
    groupId: spec.groupId,
    topics: [spec.topic],
    maxBatch: spec.maxBatch ?? 1_000,
    onAssigned: async (tps) => {
      const partitions = ofTopic(tps);
      if (partitions.length === 0 || stopping || !spec.restore) return; // shutting down: nothing more will be folded
      await spec.restore(partitions, { consumer, stop, stopping: () => stopping });
    },
    // make what is in flight durable (and committed) before the partitions move, then drop their state
    onRevoked: async (tps) => {
      await spec.inFlight.drained();
      spec.drop?.(ofTopic(tps));
    },
  });
  return consumer;
};

/** True when nothing is in flight and the group has no lag on any partition. */
export const isIdle = async (consumer: Pick<EventConsumer, 'lag'>, inFlight: InFlight): Promise<boolean> =>
  inFlight.count === 0 && (await consumer.lag()).every((l) => l.lag === 0) && inFlight.count === 0;

export interface RunOptions extends ConsumerSpec {
  /** The caller's stop. Only one listener, taken off when the topology ends, is left on it. */
  readonly stop?: Promise<unknown> | undefined;
  /** Also stop once idle (`isIdle`), checked this often (ms). */
  readonly untilCaughtUpEveryMs?: number | undefined;
  readonly onIdleProbe?: ((probe: () => Promise<boolean>) => void) | undefined;
  readonly isCommitRejected?: ((e: unknown) => boolean) | undefined;
  readonly scheduler?: SchedulerLike | undefined;
}

/**
 * The consumer wiring every topology fed by one group repeats, around the topology's own `steps`
 * (fold → publish → write):
 *
 *   openConsumer (restore / drop) ─▶ pullBatches ─▶ steps ─▶ commitWhenDurable ─▶ close (awaited)
 *
 * It ends when the caller's stop resolves, or once caught up, or on an error or unsubscribe; then
 * the topology's own stop is resolved too, so no timer or listener outlives it.
 */
export const runTopology = <U extends Committable>(
  o: RunOptions,
  steps: (batches: Observable<EventBatch>, consumer: EventConsumer) => Observable<U>,
  /** How a unit is committed (the trials append their changelog in the commit's transaction). @default consumer.commit */
  commit: (consumer: EventConsumer, unit: U) => Promise<void> = (consumer, unit) => consumer.commit(unit.positions),
): Observable<U & { committed: boolean }> =>
  defer(() => {
    const stop = ownStop(o.stop);
    return from(openConsumer(o, stop.promise)).pipe(
      switchMap((consumer) => {
        o.onIdleProbe?.(() => isIdle(consumer, o.inFlight));
        if (o.untilCaughtUpEveryMs)
          void stopWhenCaughtUp(consumer, o.inFlight, {
            everyMs: o.untilCaughtUpEveryMs,
            stop: stop.promise,
            scheduler: o.scheduler,
          }).then(stop.request);
        return steps(pullBatches(consumer.batches(), o.inFlight, stop.promise), consumer).pipe(
          commitWhenDurable((_, unit) => commit(consumer, unit), o.inFlight, o.isCommitRejected),
          // closed (the member has left its group) before the topology completes, so whoever waits
          // for it can start the next member of the group at once; on an error or unsubscribe, closed anyway
          concatWith(defer(() => consumer.close()).pipe(ignoreElements())),
          finalize(() => void consumer.close()),
        );
      }),
      finalize(() => {
        stop.release();
        stop.request();
      }),
    );
  });
