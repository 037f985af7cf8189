import { Observable, type OperatorFunction } from 'rxjs';

interface Entry<T> {
  readonly unit: T;
  started: boolean;
  done: boolean;
}

/**
 * Starts `work(unit)` for up to `concurrency` units at once, as they arrive, and passes each unit on
 * once its own work has resolved and every unit before it has been passed on: the output keeps the
 * input's order, whatever order the work finishes in. The first rejection errors the stream at once,
 * so no unit behind the failed one (nor the failed one) is passed on, even if its own work succeeded;
 * work already started is not cancelled, its outcome is ignored.
 *
 * Hand-written: `mergeMap` has the concurrency but not the order, `concatMap` the order but not the
 * overlap.
 */
export const startInOrder =
  <T>(concurrency: number, work: (unit: T) => PromiseLike<unknown>): OperatorFunction<T, T> =>
  (source) =>
    new Observable<T>((subscriber) => {
      const queue: Entry<T>[] = []; // not yet passed on, in input order
      let running = 0;
      let sourceDone = false;
      let ended = false;
      let draining = false;
      const fail = (e: unknown) => {
        if (ended) return;
        ended = true;
        subscriber.error(e);
      };
      const start = (entry: Entry<T>) => {
        entry.started = true;
        running += 1;
        let pending: PromiseLike<unknown>;
        try {
          pending = work(entry.unit);
        } catch (e) {
          fail(e);
          return;
        }
        Promise.resolve(pending).then(
          () => {
            running -= 1;
            entry.done = true;
            drain();
          },
          (e: unknown) => fail(e),
        );
      };
      const drain = () => {
        if (draining) return;
        draining = true;
        try {
          while (!ended) {
            if (queue[0]?.done) {
              subscriber.next(queue.shift()!.unit);
              continue;
            }
            const next = running < concurrency ? queue.find((e) => !e.started) : undefined;
            if (!next) break;
            start(next);
          }
          if (!ended && sourceDone && queue.length === 0) {
            ended = true;
            subscriber.complete();
          }
        } finally {
          draining = false;
        }
      };
      const sub = source.subscribe({
        next: (unit) => {
          queue.push({ unit, started: false, done: false });
          drain();
        },
        error: fail,
        complete: () => {
          sourceDone = true;
          drain();
        },
      });
      return () => {
        ended = true;
        sub.unsubscribe();
      };
    });
