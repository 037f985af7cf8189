import { Observable } from 'rxjs';
import { BackendUnavailable } from '../../schemas/errors.ts';

/**
 * Waiting on a stop promise without being kept alive by it. A stop promise outlives what waits on
 * it (deploy hands one shutdown promise to every topology; it may never resolve), and a promise's
 * handlers cannot be taken off: each `.then` keeps its closure, and all that closure reaches, until
 * the promise settles. So every wait on a stop goes through here: one handler per promise, ever,
 * and listeners that are removed once nothing waits any more.
 */
const listeners = new WeakMap<Promise<unknown>, Set<(value: unknown) => void>>();

/** The one handler on `stop`. A function of its own, so its closure holds the set and nothing of a caller's. */
const watch = (stop: Promise<unknown>): Set<(value: unknown) => void> => {
  const set = new Set<(value: unknown) => void>();
  listeners.set(stop, set);
  const fire = (value: unknown) => {
    listeners.delete(stop);
    for (const f of set) f(value);
    set.clear();
  };
  stop.then(fire, () => fire(undefined));
  return set;
};

/**
 * Calls `fn` with the stop's value once `stop` settles (resolved or rejected: both mean stop; a
 * rejection gives undefined). The returned function takes it off.
 */
export const onStop = (stop: Promise<unknown>, fn: (value: unknown) => void): (() => void) => {
  const set = listeners.get(stop) ?? watch(stop);
  const listener = (value: unknown) => fn(value); // one identity per call: the same fn may wait twice
  set.add(listener);
  return () => void set.delete(listener);
};

/** Emits the stop's value and completes when `stop` settles; unsubscribing takes the listener off. */
export const stopped$ = (stop: Promise<unknown>): Observable<unknown> =>
  new Observable<unknown>((subscriber) =>
    onStop(stop, (value) => {
      subscriber.next(value);
      subscriber.complete();
    }),
  );

/** The number of listeners waiting on `stop` (tests: nothing may be left once a topology ends). */
export const stopListeners = (stop: Promise<unknown>): number => listeners.get(stop)?.size ?? 0;

export interface OwnStop {
  /** Resolves when `request` is called or the caller's stop settles. */
  readonly promise: Promise<void>;
  readonly request: () => void;
  /** Takes the topology's listener off the caller's stop (when the topology ends): its only hold on the topology. */
  readonly release: () => void;
}

/**
 * A topology's own stop. Everything inside the topology waits on this promise, which lives and dies
 * with the topology; only one listener, removed by `release`, sits on the caller's promise.
 */
export const ownStop = (external?: Promise<unknown>): OwnStop => {
  let request!: () => void;
  const promise = new Promise<void>((resolve) => (request = resolve));
  const release = external ? onStop(external, () => request()) : () => {};
  return { promise, request, release };
};

/**
 * Whether `e`, the failure of a read that a stop asked to give up (`stopped`), is only the stop's cut: a one-use
 * reader's consumer is closed at the stop, and a read of it that was waiting out a broker away then fails with the
 * backend's error (BackendUnavailable) instead of ending. Such a read ends with what it has, as one stopped between
 * batches does: nothing of it is kept or committed, so the stop is clean (exit 0), not a lost backend (exit 3; the
 * fault campaign, seed 23237640: SIGTERM while the gates started, a broker refusing their reads).
 */
export const cutByStop = (stopped: boolean, e: unknown): boolean => stopped && e instanceof BackendUnavailable;
