import { z } from 'zod';

/**
 * One page of the row explorer, filtered and sorted on the server: the answer's size is bounded by `limit`
 * whatever the number of rows, with the count of rows the filters keep. The filters are the Rows view's
 * (and its URL's): search words, the class on each side, a tag, a flipping check, a failure category, a list of
 * ids; the sort is by row id, or a side's class, pass rate, mean latency or mean cost.
 */
export const CLASSES = ['stable_correct', 'stable_wrong', 'flip', 'unclassified'] as const;
export const SORTS = [
  'row',
  ...['b', 'c'].flatMap((s) => ['class', 'rate', 'latency', 'cost'].map((f) => `${s}.${f}`)),
];
export const MAX_PAGE = 1000;

const text = z.string().min(1).optional();
export const RowQuery = z.object({
  baseline: text,
  candidate: text,
  q: z.string().optional(),
  from: z.enum(CLASSES).optional(),
  to: z.enum(CLASSES).optional(),
  tag: text,
  check: text,
  category: text,
  /** Comma-separated row ids: only these rows. */
  ids: text,
  sort: z.enum(SORTS as [string, ...string[]]).optional(),
  dir: z.enum(['asc', 'desc']).optional(),
  /** A row whose position (and neighbours, for j / k) the answer gives; without `offset`, its page is returned. */
  row: text,
  offset: z.coerce.number().int().nonnegative().optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(200),
});
export type RowQuery = z.input<typeof RowQuery>;

export type RowFilters = z.output<typeof RowQuery>;
