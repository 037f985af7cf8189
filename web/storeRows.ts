import {
  explorerCheckNames,
  explorerCounts,
  explorerTrials,
  rowsMaybeMatching,
  type ExplorerCount,
  type ExplorerNeeds,
} from '../sinks/clickhouse/queries/explorerCounts.ts';
import type { Querier } from '../sinks/clickhouse/queries/select.ts';
import type { ExplorerRow, Scope } from './data.ts';
import { explorerView } from './explorerView.ts';
import {
  assemblePage,
  keepAndSort,
  matchesWords,
  pagePlace,
  pickSides,
  searchWords,
  type RowFilters,
  type RowKeys,
  type RowPage,
  type RowSide,
} from './rowPage.ts';

/** Whether a word is lower-case ASCII (the words the store's first pass of a search takes). */
const ascii = (w: string): boolean => {
  for (let i = 0; i < w.length; i++) if (w.charCodeAt(i) > 0x7f) return false;
  return true;
};

/** The filters' option lists of a scope: its check names (in the explorer's order), tags and failure categories. */
export type RowFacets = { checks: string[]; tags: string[]; failure_categories: string[] };

/**
 * Where a page's facets come from: those kept for its scope (`found`), or none, and then `keep` is given the ones
 * the page computed.
 */
export type FacetSource = (scope: Scope) => Promise<{ found?: RowFacets; keep: (f: RowFacets) => void }>;

const noKeptFacets: FacetSource = () => Promise.resolve({ keep: () => {} });

/**
 * The facets of each scope computed once while the store's write position (`watermark`) stays: every page of a
 * scope, whatever its filters, sort or offset, has the same check, tag and category lists (the check names are a
 * query of their own over every trial with FINAL). Only the latest watermark's are kept; facets computed under an
 * older one are not.
 */
export const keptRowFacets = (watermark: () => Promise<string>): FacetSource => {
  let mark: string | undefined;
  const kept = new Map<string, RowFacets>();
  return async (scope) => {
    const now = await watermark();
    if (now !== mark) {
      kept.clear();
      mark = now;
    }
    const key = JSON.stringify([scope.suite, scope.dataset_version]);
    return {
      ...(kept.has(key) ? { found: kept.get(key)! } : {}),
      keep: (f) => {
        if (mark === now) kept.set(key, f);
      },
    };
  };
};

type Counted = RowKeys & { exact: boolean; tags: string[]; versions: Record<string, RowSide> };

/**
 * A scope's rows as the filters and sorts read them: every row's counts (`explorerCounts`), the rows the counts
 * cannot answer folded by the explorer from their trials (`folded`), the versions, and, built on first use (a
 * search's page needs only its candidates', not every row's): every row (`all().rows`) with its keys
 * (`all().keys`: the folded row where there is one, else its counts) in the order of the counts' lines, the keys of
 * some rows (`keysOf`), the number of rows (`total`) and the tags and failure categories over every row's keys
 * (`tagsAndCategories`, sorted). Not changed by its readers.
 */
export type CountedRows = {
  versions: readonly string[];
  folded: ReadonlyMap<string, ExplorerRow>;
  all: () => { rows: ReadonlyMap<string, Counted>; keys: readonly RowKeys[] };
  keysOf: (ids: readonly string[]) => RowKeys[];
  total: () => number;
  tagsAndCategories: () => { tags: string[]; failure_categories: string[] };
};

/** Once, on first use. */
const once = <T>(f: () => T): (() => T) => {
  let done: { value: T } | undefined;
  return () => (done ??= { value: f() }).value;
};

/**
 * The counted rows of a scope from its counts' lines (one per version and row) and its folded rows: the per-row
 * records are built only for the rows asked for (`keysOf`), or for every row on the first `all()`.
 */
const countedRows = (lines: readonly ExplorerCount[], folded: ReadonlyMap<string, ExplorerRow>): CountedRows => {
  const versionSet = new Set<string>();
  for (const l of lines) versionSet.add(l.agent_version);
  // one row's record from its lines, in the lines' order
  const add = (rows: Map<string, Counted>, l: ExplorerCount) => {
    let row = rows.get(l.row_id);
    if (!row) rows.set(l.row_id, (row = { row_id: l.row_id, exact: true, tags: [], versions: {} }));
    row.exact &&= l.exact;
    for (const t of l.tags) if (!row.tags.includes(t)) row.tags.push(t);
    row.versions[l.agent_version] = l;
  };
  // the records of the rows `keep` takes, with their keys, in the lines' order
  const recordsOf = (keep: (id: string) => boolean) => {
    const rows = new Map<string, Counted>();
    for (const l of lines) if (keep(l.row_id)) add(rows, l);
    const keys: RowKeys[] = [];
    for (const r of rows.values()) keys.push(folded.get(r.row_id) ?? r);
    return { rows, keys };
  };
  let every: ReturnType<typeof recordsOf> | undefined;
  const all = () => (every ??= recordsOf(() => true));
  return {
    versions: [...versionSet].sort(),
    folded,
    all,
    keysOf: (ids) => {
      const asked = new Set(ids);
      return recordsOf((id) => asked.has(id)).keys;
    },
    total: once(() => {
      if (every) return every.rows.size;
      const ids = new Set<string>();
      for (const l of lines) ids.add(l.row_id);
      return ids.size;
    }),
    tagsAndCategories: once(() => {
      // a row's keys are its fold where it has one, else its lines
      const tags = new Set<string>();
      const categories = new Set<string>();
      for (const l of lines)
        if (!folded.has(l.row_id)) {
          for (const t of l.tags) tags.add(t);
          for (const c of l.failure_categories) categories.add(c);
        }
      for (const r of folded.values()) {
        for (const t of r.tags) tags.add(t);
        for (const v of Object.values(r.versions)) for (const c of v!.failure_categories) categories.add(c);
      }
      return { tags: [...tags].sort(), failure_categories: [...categories].sort() };
    }),
  };
};

/**
 * Where a page's counted rows come from: `compute` (the store's queries) or an answer kept for the same scope and
 * needs (`keptCountedRows`).
 */
export type CountedRowsSource = (
  scope: Scope,
  needs: ExplorerNeeds,
  compute: () => Promise<CountedRows>,
) => Promise<CountedRows>;

const noKeptCounts: CountedRowsSource = (_scope, _needs, compute) => compute();

/**
 * The counted rows of a scope (per needs) computed once while the store's write position (`watermark`) stays, as
 * the overview's counts are (`sharedRowCounts`): a page turn, another filter, a search or another sort of the same
 * needs reuses them instead of the counts query over every trial (about 4× the bare GROUP BY at 1M trials) and the
 * fold of the inexact rows. Questions asked while the answer is being computed wait for it (one query for ten
 * clients). Only the latest watermark's answers are kept, at most `max` of them (least recently used dropped
 * first: one is about 200k small records at 1M trials), and a failed one is not kept.
 */
export const keptCountedRows = (watermark: () => Promise<string>, max = 4): CountedRowsSource => {
  let mark: string | undefined;
  const kept = new Map<string, Promise<CountedRows>>();
  return async (scope, needs, compute) => {
    const now = await watermark();
    if (now !== mark) {
      kept.clear();
      mark = now;
    }
    const key = JSON.stringify([scope.suite, scope.dataset_version, needs.checks, needs.means]);
    const found = kept.get(key);
    if (found) {
      kept.delete(key); // most recently used last
      kept.set(key, found);
      return found;
    }
    const answer = compute();
    kept.set(key, answer);
    while (kept.size > max) kept.delete(kept.keys().next().value!);
    answer.catch(() => {
      if (kept.get(key) === answer) kept.delete(key);
    });
    return answer;
  };
};

/**
 * One page of the row explorer from the store, the same answer as `rowPage(explorerView(every trial))`: the rows
 * are filtered and sorted on per-row counts ClickHouse computes (`explorerCounts`), and trials are read only for
 * - the rows the counts cannot answer exactly (copies, conflicting re-sends, two trials in one slot, checks
 *   answered in different orders): folded by the explorer from their trials, as before;
 * - a search's rows: those the store finds may hold every ASCII word (a superset), tested exactly on their trials;
 * - the page's rows, which the answer shows in full (input, expected answer, outputs): only the columns the
 *   explorer reads (`explorerTrials`).
 * The facets (check names, tags, categories) are `facets`' when it keeps them for the scope, and the counted rows
 * `counts`' when it keeps them for the scope and needs.
 */
export const rowPageFromStore = async (
  client: Querier,
  q: Scope & RowFilters,
  facets: FacetSource = noKeptFacets,
  counts: CountedRowsSource = noKeptCounts,
): Promise<RowPage> => {
  const scope: Scope = { suite: q.suite, dataset_version: q.dataset_version };
  const explorerRows = async (ids: readonly string[]): Promise<ExplorerRow[]> =>
    ids.length === 0 ? [] : explorerView(scope, await explorerTrials(client, { ...scope, rowIds: ids })).rows;

  const sort = q.sort ?? 'row';
  const needs = { checks: q.check !== undefined, means: sort.endsWith('.latency') || sort.endsWith('.cost') };
  const compute = async (): Promise<CountedRows> => {
    // from the row state when it is proved to hold every trial with its extras, else from the trials
    const lines = await explorerCounts(client, scope, needs);
    // rows the counts cannot answer: the explorer's own summary of their trials (every version)
    const inexact = new Set<string>();
    for (const l of lines) if (!l.exact) inexact.add(l.row_id);
    const folded = new Map<string, ExplorerRow>();
    for (const r of await explorerRows([...inexact])) folded.set(r.row_id, r);
    return countedRows(lines, folded);
  };
  // A search's first pass (a pass of its own over every trial) and the fold of the rows it finds, beside the
  // counts and check names, for the versions the query names: asked again after the counts only if the scope's
  // versions pick other sides. A row's fold reads only its own trials, so folding it early gives the same row.
  const words = searchWords(q.q);
  const first = words.filter(ascii);
  const firstPass = (vs: readonly string[]) => rowsMaybeMatching(client, { ...scope, words: first, versions: vs });
  let guessed: { vs: string[]; rows: Promise<string[]>; folded: Promise<ExplorerRow[]> } | undefined;
  if (first.length > 0 && q.baseline !== undefined && q.candidate !== undefined && q.baseline !== q.candidate) {
    const hits = firstPass([q.baseline, q.candidate]);
    guessed = { vs: [q.baseline, q.candidate], rows: hits, folded: hits.then(explorerRows) };
    guessed.folded.catch(() => {}); // awaited below when used; a failure of one not used is no failure
  }
  const asked = facets(scope);
  const [counted, checks, { found, keep }] = await Promise.all([
    counts(scope, needs, compute),
    asked.then((k) => k.found?.checks ?? explorerCheckNames(client, scope)),
    asked,
  ]);
  const { versions, folded } = counted;
  const known = new Map(folded);

  let shown = found;
  if (!shown) {
    shown = { checks, ...counted.tagsAndCategories() };
    keep(shown);
  }

  const sides = pickSides(versions, q);
  const vs = [sides.baseline, sides.candidate].filter((v): v is string => v !== undefined);
  // the rows the filters see: with a search, only those its first pass finds (it keeps no other), so a cold search
  // builds the records of a few hundred rows, not of every row (`keepAndSort` orders by the sort's value, then by
  // row id: the order of the rows it is given does not change its answer)
  let candidates: readonly RowKeys[] | undefined;
  let search: ((r: RowKeys) => boolean) | undefined;
  if (words.length > 0) {
    const early = guessed && guessed.vs.length === vs.length && guessed.vs.every((v, i) => v === vs[i]);
    if (first.length > 0) candidates = counted.keysOf(early ? await guessed!.rows : await firstPass(vs));
    if (early) for (const r of await guessed!.folded) if (!known.has(r.row_id)) known.set(r.row_id, r);
    const maybe = candidates ?? counted.all().keys;
    const missing = maybe.map((r) => r.row_id).filter((id) => !known.has(id));
    for (const r of await explorerRows(missing)) known.set(r.row_id, r);
    const matching = new Set<string>();
    for (const { row_id } of maybe) {
      const r = known.get(row_id);
      if (r && matchesWords(r, words, vs)) matching.add(row_id);
    }
    search = (r) => matching.has(r.row_id);
  }
  const kept = keepAndSort(candidates ?? counted.all().keys, q, sides.baseline, sides.candidate, search);

  const place = pagePlace(kept, q);
  const page = kept.slice(place.offset, place.offset + q.limit).map((r) => r.row_id);
  for (const r of await explorerRows(page.filter((id) => !known.has(id)))) known.set(r.row_id, r);
  return assemblePage(
    {
      suite: scope.suite,
      dataset_version: scope.dataset_version,
      versions: [...versions],
      checks: [...shown.checks],
      failure_categories: [...shown.failure_categories],
      tags: [...shown.tags],
      rows_total: counted.total(),
    },
    sides,
    kept,
    q,
    place,
    page.map((id) => known.get(id)!),
  );
};
