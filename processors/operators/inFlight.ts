/**
 * Flow control between the consumer and the end of the pipeline: records taken from the log and
 * not yet committed. The source pulls only while there is room, so a slow sink pauses consumption
 * and memory stays bounded by `max` records (plus one batch).
 */
export interface InFlight {
  /** Records pulled and not yet committed. */
  readonly count: number;
  readonly max: number;
  acquire(records: number): void;
  release(records: number): void;
  /** Resolves when there is room for another batch. */
  room(): Promise<void>;
  /** Resolves when nothing is in flight (everything pulled has been committed or dropped). */
  drained(): Promise<void>;
}

export const createInFlight = (max: number): InFlight => {
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`max in-flight records must be a positive integer, got ${max}`);
  let count = 0;
  let waiters: { test: () => boolean; resolve: () => void }[] = [];
  const wake = () => {
    const ready = waiters.filter((w) => w.test());
    waiters = waiters.filter((w) => !w.test());
    for (const w of ready) w.resolve();
  };
  const when = (test: () => boolean): Promise<void> =>
    test() ? Promise.resolve() : new Promise((resolve) => waiters.push({ test, resolve }));
  return {
    get count() {
      return count;
    },
    max,
    acquire: (n) => {
      count += n;
    },
    release: (n) => {
      count = Math.max(0, count - n);
      wake();
    },
    room: () => when(() => count < max),
    drained: () => when(() => count === 0),
  };
};
