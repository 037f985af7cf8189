import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

export interface BatchRowsOptions<T> {
  /** Emit as soon as the group holds this many rows. */
  readonly maxRows: number;
  /** …or this long after the group's first item, whichever comes first. */
  readonly maxWaitMs: number;
  /** Rows an item counts for. @default 1 */
  readonly sizeOf?: (item: T) => number;
  /** Emit the group at once after an item for which this is true (the source has nothing more for now). */
  readonly closesGroup?: (item: T) => boolean;
  readonly scheduler?: SchedulerLike;
}

/**
 * Groups items for one durable write: by rows or by time, whichever comes first (each ClickHouse
 * insert makes a part, so never one per event), or when an item closes the group (`closesGroup`). Emits what is left when the source completes.
 * Hand-written: `bufferTime` counts items, not rows, and ticks when idle.
 */
export const batchRows =
  <T>({
    maxRows,
    maxWaitMs,
    sizeOf = () => 1,
    closesGroup = () => false,
    scheduler = asyncScheduler,
  }: BatchRowsOptions<T>): OperatorFunction<T, T[]> =>
  (source) =>
    new Observable<T[]>((subscriber) => {
      let group: T[] = [];
      let rows = 0;
      let timer: Subscription | undefined;
      const flush = () => {
        timer?.unsubscribe();
        timer = undefined;
        if (group.length === 0) return;
        const out = group;
        group = [];
        rows = 0;
        subscriber.next(out);
      };
      const sub = source.subscribe({
        next: (item) => {
          group.push(item);
          rows += sizeOf(item);
          if (rows >= maxRows || closesGroup(item)) flush();
          else timer ??= scheduler.schedule(flush, maxWaitMs);
        },
        error: (e) => subscriber.error(e),
        complete: () => {
          flush();
          subscriber.complete();
        },
      });
      return () => {
        timer?.unsubscribe();
        sub.unsubscribe();
      };
    });
