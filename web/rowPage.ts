import { z } from 'zod';
import type { ExplorerRow, ExplorerView } from './data.ts';

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

export type RowPage = Omit<ExplorerView, 'rows'> & {
  baseline: string | null;
  candidate: string | null;
  /** Every tag of the scope's rows, for the filter. */
  tags: string[];
  /** Rows in the scope, and rows the filters keep. */
  rows_total: number;
  total: number;
  offset: number;
  limit: number;
  rows: ExplorerRow[];
  /** Where `row` is among the kept rows, with its neighbours; null when it is not among them (or not asked). */
  row_at: { index: number; prev: string | null; next: string | null } | null;
};

/** The rows the filters keep, in the chosen order (ties and nulls: by row id, nulls last). */
export const filterRows = (
  view: ExplorerView,
  f: z.output<typeof RowQuery>,
  baseline: string | undefined,
  candidate: string | undefined,
): ExplorerRow[] => {
  const words = (f.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const ids = f.ids ? new Set(f.ids.split(',')) : null;
  const vs = [baseline, candidate].filter((v): v is string => v !== undefined);
  const kept = view.rows.filter((r) => {
    const b = baseline === undefined ? undefined : r.versions[baseline];
    const c = candidate === undefined ? undefined : r.versions[candidate];
    if (ids && !ids.has(r.row_id)) return false;
    if (f.from && (b?.class ?? 'unclassified') !== f.from) return false;
    if (f.to && (c?.class ?? 'unclassified') !== f.to) return false;
    if (f.tag && !r.tags.includes(f.tag)) return false;
    if (f.check && !vs.some((v) => r.versions[v]?.flipping_checks.includes(f.check!))) return false;
    if (f.category && !vs.some((v) => r.versions[v]?.failure_categories.includes(f.category!))) return false;
    if (words.length) {
      const all = [r.row_id, r.input ?? '', r.expected ?? '', ...vs.flatMap((v) => r.versions[v]?.outputs ?? [])]
        .join('\n')
        .toLowerCase();
      if (!words.every((w) => all.includes(w))) return false;
    }
    return true;
  });
  const key = f.sort ?? 'row';
  const sign = f.dir === 'desc' ? -1 : 1;
  const [side, field] = key.split('.');
  const version = side === 'b' ? baseline : candidate;
  const value = (r: ExplorerRow): string | number | null => {
    if (key === 'row') return r.row_id;
    const v = version === undefined ? undefined : r.versions[version];
    if (!v) return null;
    if (field === 'class') return CLASSES.indexOf(v.class as (typeof CLASSES)[number]);
    if (field === 'rate') return v.n ? v.c / v.n : null;
    if (field === 'latency') return v.mean_latency_ms;
    if (field === 'cost') return v.mean_cost_usd;
    return null;
  };
  const keyed = kept.map((r) => ({ r, v: value(r) }));
  keyed.sort((x, y) => {
    const a = x.v;
    const b = y.v;
    if (a === b) return x.r.row_id < y.r.row_id ? -1 : x.r.row_id > y.r.row_id ? 1 : 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return (a < b ? -1 : 1) * sign;
  });
  return keyed.map((k) => k.r);
};

/** The page of `view` that `query` asks for. */
export const rowPage = (view: ExplorerView, query: z.output<typeof RowQuery>): RowPage => {
  const pick = (v: string | undefined) => (v !== undefined && view.versions.includes(v) ? v : undefined);
  const baseline = pick(query.baseline) ?? view.versions[0];
  const candidate = pick(query.candidate) ?? view.versions.find((v) => v !== baseline);
  const kept = filterRows(view, query, baseline, candidate);
  const index = query.row === undefined ? -1 : kept.findIndex((r) => r.row_id === query.row);
  const { limit } = query;
  const offset = query.offset ?? (index >= 0 ? Math.floor(index / limit) * limit : 0);
  const tags = new Set<string>();
  for (const r of view.rows) for (const t of r.tags) tags.add(t);
  const { rows: all, ...facets } = view;
  return {
    ...facets,
    baseline: baseline ?? null,
    candidate: candidate ?? null,
    tags: [...tags].sort(),
    rows_total: all.length,
    total: kept.length,
    offset,
    limit,
    rows: kept.slice(offset, offset + limit),
    row_at: index < 0 ? null : { index, prev: kept[index - 1]?.row_id ?? null, next: kept[index + 1]?.row_id ?? null },
  };
};
