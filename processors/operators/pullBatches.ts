import { Observable } from 'rxjs';
import type { EventBatch } from '../ports.ts';
import type { InFlight } from './inFlight.ts';

/**
 * The source of a topology: batches pulled from the consumer one at a time, and only while the
 * in-flight window has room (backpressure: `EventConsumer.batches()` fetches nothing until asked).
 * When `stop` resolves, pulling stops and the stream completes once everything in flight has been
 * committed, so a shutdown commits what is durable. A batch that arrives after the stop is dropped
 * uncommitted: the log delivers it again.
 *
 * Hand-written because a pull loop with credits is what RxJS composition cannot express.
 */
export const pullBatches = (batches: AsyncIterable<EventBatch>, inFlight: InFlight, stop: Promise<unknown>): Observable<EventBatch> =>
  new Observable<EventBatch>((subscriber) => {
    const iterator = batches[Symbol.asyncIterator]();
    let stopped = false;
    const stopping = stop.then(() => {
      stopped = true;
    });
    const finish = () => inFlight.drained().then(() => subscriber.complete());
    void (async () => {
      try {
        while (!stopped && !subscriber.closed) {
          await Promise.race([inFlight.room(), stopping]);
          if (stopped) break;
          const next = await Promise.race([iterator.next(), stopping.then(() => undefined)]);
          if (next === undefined || stopped || next.done) break;
          inFlight.acquire(Math.max(1, next.value.events.length));
          subscriber.next(next.value);
        }
        await finish();
      } catch (e) {
        subscriber.error(e);
      }
    })();
  });
