import type { ExplorerRow, ExplorerVersion, ExplorerView, RowPage } from './data.ts';
import { CLASSES, type RowFilters } from './rowQuery.ts';

export { CLASSES, MAX_PAGE, RowQuery, SORTS, type RowFilters } from './rowQuery.ts';
export type { RowPage } from './data.ts';

/** What filtering and sorting read of a row's side: the explorer's numbers, without the outputs. */
export type RowSide = Pick<
  ExplorerVersion,
  'class' | 'n' | 'c' | 'flipping_checks' | 'failure_categories' | 'mean_latency_ms' | 'mean_cost_usd'
>;
/** What filtering and sorting read of a row (an ExplorerRow is one); the search words are matched by `search`. */
export type RowKeys = { row_id: string; tags: readonly string[]; versions: Record<string, RowSide | undefined> };

/** The search box's words: lower-cased, split on white space. */
export const searchWords = (q: string | undefined): string[] => (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);

/** Whether every word is in the row's id, input, expected answer or an output of one of `versions`. */
export const matchesWords = (r: ExplorerRow, words: readonly string[], versions: readonly string[]): boolean => {
  const all = [r.row_id, r.input ?? '', r.expected ?? '', ...versions.flatMap((v) => r.versions[v]?.outputs ?? [])]
    .join('\n')
    .toLowerCase();
  return words.every((w) => all.includes(w));
};

/**
 * The rows the filters keep, in the chosen order (ties and nulls: by row id, nulls last). The search words are
 * `search`'s to match (it sees only rows every other filter keeps); without it, `f.q` is not applied.
 */
export const keepAndSort = <R extends RowKeys>(
  rows: readonly R[],
  f: RowFilters,
  baseline: string | undefined,
  candidate: string | undefined,
  search?: (r: R) => boolean,
): R[] => {
  const ids = f.ids ? new Set(f.ids.split(',')) : null;
  const vs = [baseline, candidate].filter((v): v is string => v !== undefined);
  const kept = rows.filter((r) => {
    const b = baseline === undefined ? undefined : r.versions[baseline];
    const c = candidate === undefined ? undefined : r.versions[candidate];
    if (ids && !ids.has(r.row_id)) return false;
    if (f.from && (b?.class ?? 'unclassified') !== f.from) return false;
    if (f.to && (c?.class ?? 'unclassified') !== f.to) return false;
    if (f.tag && !r.tags.includes(f.tag)) return false;
    if (f.check && !vs.some((v) => r.versions[v]?.flipping_checks.includes(f.check!))) return false;
    if (f.category && !vs.some((v) => r.versions[v]?.failure_categories.includes(f.category!))) return false;
    if (search && !search(r)) return false;
    return true;
  });
  const key = f.sort ?? 'row';
  const sign = f.dir === 'desc' ? -1 : 1;
  const [side, field] = key.split('.');
  const version = side === 'b' ? baseline : candidate;
  const value = (r: R): string | number | null => {
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

/** The rows of `view` the filters keep, in the chosen order. */
export const filterRows = (
  view: ExplorerView,
  f: RowFilters,
  baseline: string | undefined,
  candidate: string | undefined,
): ExplorerRow[] => {
  const words = searchWords(f.q);
  const vs = [baseline, candidate].filter((v): v is string => v !== undefined);
  return keepAndSort(view.rows, f, baseline, candidate, words.length ? (r) => matchesWords(r, words, vs) : undefined);
};

/** The baseline and candidate a query asks for among the scope's versions (sorted): else the first two. */
export const pickSides = (
  versions: readonly string[],
  q: Pick<RowFilters, 'baseline' | 'candidate'>,
): { baseline: string | undefined; candidate: string | undefined } => {
  const pick = (v: string | undefined) => (v !== undefined && versions.includes(v) ? v : undefined);
  const baseline = pick(q.baseline) ?? versions[0];
  const candidate = pick(q.candidate) ?? versions.find((v) => v !== baseline);
  return { baseline, candidate };
};

/** Where the page starts (the page of `query.row` without an offset), and the row's place among the kept rows. */
export const pagePlace = (
  kept: readonly { row_id: string }[],
  query: RowFilters,
): { index: number; offset: number } => {
  let index = -1;
  if (query.row !== undefined)
    for (let i = 0; i < kept.length && index < 0; i++) if (kept[i]!.row_id === query.row) index = i;
  const offset = query.offset ?? (index >= 0 ? Math.floor(index / query.limit) * query.limit : 0);
  return { index, offset };
};

/** The answer: the facets, the kept rows' count and place, and the page's rows (`rows`, the page's ids in order). */
export const assemblePage = (
  facets: Omit<ExplorerView, 'rows'> & { tags: string[]; rows_total: number },
  sides: { baseline: string | undefined; candidate: string | undefined },
  kept: readonly { row_id: string }[],
  query: RowFilters,
  place: { index: number; offset: number },
  rows: ExplorerRow[],
): RowPage => {
  const { index, offset } = place;
  return {
    ...facets,
    baseline: sides.baseline ?? null,
    candidate: sides.candidate ?? null,
    total: kept.length,
    offset,
    limit: query.limit,
    rows,
    row_at: index < 0 ? null : { index, prev: kept[index - 1]?.row_id ?? null, next: kept[index + 1]?.row_id ?? null },
  };
};

/** The page of `view` that `query` asks for. */
export const rowPage = (view: ExplorerView, query: RowFilters): RowPage => {
  const sides = pickSides(view.versions, query);
  const kept = filterRows(view, query, sides.baseline, sides.candidate);
  const tags = new Set<string>();
  for (const r of view.rows) for (const t of r.tags) tags.add(t);
  const { rows: all, ...facets } = view;
  const place = pagePlace(kept, query);
  const rows = kept.slice(place.offset, place.offset + query.limit);
  return assemblePage({ ...facets, tags: [...tags].sort(), rows_total: all.length }, sides, kept, query, place, rows);
};
