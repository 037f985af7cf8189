import type { OperatorFunction } from 'rxjs';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { startInOrder } from './startInOrder.ts';

export interface WriteAndEmitOptions {
  /**
   * Units whose changelog publish may be in flight at once. At 1 a unit's publish starts after the one before
   * it was acknowledged; above, it relies on the publisher appending overlapping calls in call order per key
   * (EventPublisher). Store writes are always one at a time, in order. @default 1
   */
  readonly concurrency?: number;
}

/**
 * A unit's store write and its changelog publish, at the same time; the unit is passed on once both are durable,
 * and after every unit before it. Writes go one at a time in order, and so do publishes (at `concurrency` 1), so
 * unit k+1's write can run beside unit k's publish, as before, and unit k's publish no longer waits for unit k's
 * write. The first failure of either stops the stream: no unit behind it (nor the failed one) is passed on, so
 * nothing past it is committed; a write or publish queued behind a failed one of its kind is not started.
 *
 * So a changelog may be durable while its store write failed (or never ran: the process died). The restart
 * restores those rows from the changelog and rewrites them to the store as their records are read again
 * (foldUnits' repair window), before their offsets are committed.
 */
export const writeAndEmit = <T>(
  write: (unit: T) => Promise<unknown>,
  publish: (events: readonly PasskEvent[]) => Promise<unknown>,
  eventsOf: (unit: T) => readonly PasskEvent[],
  { concurrency = 1 }: WriteAndEmitOptions = {},
): OperatorFunction<T, T> => {
  let writing: Promise<unknown> = Promise.resolve();
  let publishing: Promise<unknown> = Promise.resolve();
  const publishOf = (unit: T): Promise<unknown> => {
    const events = eventsOf(unit);
    return events.length === 0 ? Promise.resolve() : publish(events);
  };
  return startInOrder(Math.max(2, concurrency), (unit) => {
    const written = (writing = writing.then(() => write(unit)));
    const published = concurrency <= 1 ? (publishing = publishing.then(() => publishOf(unit))) : publishOf(unit);
    // each chain's own rejection is seen by the unit that failed; the ones queued behind it reject with it, unseen
    written.catch(() => {});
    published.catch(() => {});
    return Promise.all([written, published]);
  });
};
