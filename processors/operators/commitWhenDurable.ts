import {
  catchError,
  concatMap,
  defaultIfEmpty,
  from,
  last,
  map,
  of,
  throwError,
  type ObservableInput,
  type OperatorFunction,
} from 'rxjs';
import type { Position } from './foldUnits.ts';
import type { InFlight } from './inFlight.ts';

export interface Committable {
  readonly positions: readonly Position[];
  readonly weight: number;
}

/**
 * The last step of a unit: everything it depends on is durable, so its positions are committed
 * and its records leave the in-flight window. A commit the log rejects because the partitions
 * moved to another member (`isRejected`) is dropped: the new owner re-reads from the last commit,
 * and the fold is idempotent. Any other error stops the topology uncommitted.
 */
export const commitWhenDurable = <T extends Committable>(
  commit: (positions: readonly Position[], unit: T) => ObservableInput<unknown>,
  inFlight: InFlight,
  isRejected: (e: unknown) => boolean = () => false,
): OperatorFunction<T, T & { committed: boolean }> =>
  concatMap((unit) =>
    from(commit(unit.positions, unit)).pipe(
      defaultIfEmpty(undefined),
      last(),
      map(() => true),
      catchError((e: unknown) => (isRejected(e) ? of(false) : throwError(() => e))),
      map((committed) => {
        inFlight.release(unit.weight);
        return { ...unit, committed };
      }),
    ),
  );
