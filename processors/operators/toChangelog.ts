import { map, type OperatorFunction } from 'rxjs';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import { toRowStateChanged } from '../folds/rowState.ts';
import type { FoldedTrials } from './foldRows.ts';

export type WithChangelog = FoldedTrials & { readonly changelog: readonly RowStateChanged[] };

/** The changelog records of a unit's changed rows, built once for the log and the sink. */
export const toChangelog = (producer: string): OperatorFunction<FoldedTrials, WithChangelog> =>
  map((unit) => ({
    ...unit,
    // the table's own key strings: their hashes (Map lookups) are already computed
    changelog: Array.from(unit.changes, ([key, r]) => toRowStateChanged(r, producer, key)),
  }));
