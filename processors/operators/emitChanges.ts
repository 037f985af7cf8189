import { concatMap, from, lastValueFrom, map, of, type ObservableInput, type OperatorFunction } from 'rxjs';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { startInOrder } from './startInOrder.ts';

export interface EmitChangesOptions {
  /**
   * Units whose publish may be in flight at once. Each unit is still passed on only once its own
   * events are acknowledged and after every unit before it, so the commits after this step stay in
   * order and a failed publish stops the stream before any later unit is passed on. Above 1 it relies
   * on the publisher appending overlapping calls in call order per key (EventPublisher). @default 1
   */
  readonly concurrency?: number;
}

/**
 * Publishes each unit's derived events (changelog records, decisions, alerts) and passes the unit
 * on once the log acknowledged them as durable, in order.
 */
export const emitChanges = <T>(
  publish: (events: readonly PasskEvent[]) => ObservableInput<unknown>,
  eventsOf: (unit: T) => readonly PasskEvent[],
  { concurrency = 1 }: EmitChangesOptions = {},
): OperatorFunction<T, T> => {
  if (concurrency <= 1)
    return concatMap((unit) => {
      const events = eventsOf(unit);
      return events.length === 0 ? of(unit) : from(publish(events)).pipe(map(() => unit));
    });
  return startInOrder(concurrency, (unit) => {
    const events = eventsOf(unit);
    return events.length === 0 ? Promise.resolve() : lastValueFrom(from(publish(events)), { defaultValue: undefined });
  });
};
