import { concatMap, from, map, of, type ObservableInput, type OperatorFunction } from 'rxjs';
import type { PasskEvent } from '../../schemas/events/index.ts';

/**
 * Publishes each unit's derived events (changelog records, decisions, alerts) and passes the unit
 * on once the log acknowledged them as durable. One unit at a time, in order.
 */
export const emitChanges = <T>(
  publish: (events: readonly PasskEvent[]) => ObservableInput<unknown>,
  eventsOf: (unit: T) => readonly PasskEvent[],
): OperatorFunction<T, T> =>
  concatMap((unit) => {
    const events = eventsOf(unit);
    return events.length === 0 ? of(unit) : from(publish(events)).pipe(map(() => unit));
  });
