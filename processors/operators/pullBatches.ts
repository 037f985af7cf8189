import { Observable } from 'rxjs';
import type { EventBatch } from '../ports.ts';
import type { InFlight } from './inFlight.ts';
import { onStop } from './onStop.ts';

/**
 * The source of a topology: batches pulled from the consumer one at a time, and only while the
 * in-flight window has room (backpressure: `EventConsumer.batches()` fetches nothing until asked).
 * When `stop` resolves, pulling stops and the stream completes once everything in flight has been
 * committed, so a shutdown commits what is durable. A batch that arrives after the stop is dropped
 * uncommitted: the log delivers it again.
 *
 * Hand-written because a pull loop with credits is what RxJS composition cannot express. Each wait
 * is woken by the one stop listener, not raced against the stop promise: `Promise.race` leaves a
 * handler on its inputs, and one left on `stop` per batch would keep every batch ever pulled (the
 * race's result) reachable until the stop.
 */
export const pullBatches = (
  batches: AsyncIterable<EventBatch>,
  inFlight: InFlight,
  stop: Promise<unknown>,
): Observable<EventBatch> =>
  new Observable<EventBatch>((subscriber) => {
    const iterator = batches[Symbol.asyncIterator]();
    let stopped = false;
    let wake = () => {};
    const halt = () => {
      stopped = true;
      wake();
    };
    const off = onStop(stop, halt);
    /** `p`, or undefined as soon as the stop comes. */
    const unlessStopped = <T>(p: Promise<T>): Promise<T | undefined> =>
      new Promise<T | undefined>((resolve, reject) => {
        wake = () => resolve(undefined);
        p.then(resolve, reject);
      });
    void (async () => {
      try {
        while (!stopped && !subscriber.closed) {
          await unlessStopped(inFlight.room());
          if (stopped) break;
          const next = await unlessStopped(iterator.next());
          wake = () => {};
          if (next === undefined || stopped || next.done) break;
          inFlight.acquire(Math.max(1, next.value.events.length));
          subscriber.next(next.value);
        }
        off();
        await inFlight.drained();
        subscriber.complete();
      } catch (e) {
        off();
        subscriber.error(e);
      }
    })();
    return () => {
      off();
      halt(); // unsubscribed: end the loop rather than leave it waiting on the consumer
    };
  });
