import { concatMap, defaultIfEmpty, from, last, map, type ObservableInput, type OperatorFunction } from 'rxjs';

/**
 * Writes each unit to the sink and passes it on once the write is durable. One write at a time:
 * while it is in flight nothing is committed, the in-flight window fills and the consumer pauses.
 */
export const writeRows = <T>(write: (unit: T) => ObservableInput<unknown>): OperatorFunction<T, T> =>
  concatMap((unit) =>
    from(write(unit)).pipe(
      defaultIfEmpty(undefined),
      last(),
      map(() => unit),
    ),
  );
