import { explorerCheckNames, explorerCounts, rowsMaybeMatching } from '../sinks/clickhouse/queries/explorerCounts.ts';
import { loadTrialsForReport } from '../sinks/clickhouse/queries/report.ts';
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

/**
 * One page of the row explorer from the store, the same answer as `rowPage(explorerView(every trial))`: the rows
 * are filtered and sorted on per-row counts ClickHouse computes (`explorerCounts`), and trials are read only for
 * - the rows the counts cannot answer exactly (copies, conflicting re-sends, two trials in one slot, checks
 *   answered in different orders): folded by the explorer from their trials, as before;
 * - a search's rows: those the store finds may hold every ASCII word (a superset), tested exactly on their trials;
 * - the page's rows, which the answer shows in full (input, expected answer, outputs).
 */
export const rowPageFromStore = async (client: Querier, q: Scope & RowFilters): Promise<RowPage> => {
  const scope: Scope = { suite: q.suite, dataset_version: q.dataset_version };
  const explorerRows = async (ids: readonly string[]): Promise<ExplorerRow[]> =>
    ids.length === 0
      ? []
      : explorerView(
          scope,
          await loadTrialsForReport(client, {
            suites: [scope.suite],
            datasetVersions: [scope.dataset_version],
            rowIds: ids,
          }),
        ).rows;

  const sort = q.sort ?? 'row';
  const needs = { checks: q.check !== undefined, means: sort.endsWith('.latency') || sort.endsWith('.cost') };
  const [lines, checks] = await Promise.all([explorerCounts(client, scope, needs), explorerCheckNames(client, scope)]);
  type Counted = RowKeys & { exact: boolean; tags: string[]; versions: Record<string, RowSide> };
  const rows = new Map<string, Counted>();
  const versionSet = new Set<string>();
  for (const l of lines) {
    versionSet.add(l.agent_version);
    let row = rows.get(l.row_id);
    if (!row) rows.set(l.row_id, (row = { row_id: l.row_id, exact: true, tags: [], versions: {} }));
    row.exact &&= l.exact;
    for (const t of l.tags) if (!row.tags.includes(t)) row.tags.push(t);
    row.versions[l.agent_version] = l;
  }
  const versions = [...versionSet].sort();

  // rows the counts cannot answer: the explorer's own summary of their trials (every version)
  const known = new Map<string, ExplorerRow>();
  const inexact: string[] = [];
  for (const r of rows.values()) if (!r.exact) inexact.push(r.row_id);
  for (const r of await explorerRows(inexact)) known.set(r.row_id, r);

  const keys: RowKeys[] = [];
  const tags = new Set<string>();
  const categories = new Set<string>();
  for (const r of rows.values()) {
    const row: RowKeys = known.get(r.row_id) ?? r;
    for (const t of row.tags) tags.add(t);
    for (const v of Object.values(row.versions)) for (const c of v!.failure_categories) categories.add(c);
    keys.push(row);
  }

  const sides = pickSides(versions, q);
  const vs = [sides.baseline, sides.candidate].filter((v): v is string => v !== undefined);
  const words = searchWords(q.q);
  let search: ((r: RowKeys) => boolean) | undefined;
  if (words.length > 0) {
    const first = words.filter(ascii);
    const maybe =
      first.length > 0 ? await rowsMaybeMatching(client, { ...scope, words: first, versions: vs }) : [...rows.keys()];
    const missing = maybe.filter((id) => rows.has(id) && !known.has(id));
    for (const r of await explorerRows(missing)) known.set(r.row_id, r);
    const matching = new Set<string>();
    for (const id of maybe) {
      const r = known.get(id);
      if (r && matchesWords(r, words, vs)) matching.add(id);
    }
    search = (r) => matching.has(r.row_id);
  }
  const kept = keepAndSort(keys, q, sides.baseline, sides.candidate, search);

  const place = pagePlace(kept, q);
  const page = kept.slice(place.offset, place.offset + q.limit).map((r) => r.row_id);
  for (const r of await explorerRows(page.filter((id) => !known.has(id)))) known.set(r.row_id, r);
  return assemblePage(
    {
      suite: scope.suite,
      dataset_version: scope.dataset_version,
      versions,
      checks,
      failure_categories: [...categories].sort(),
      tags: [...tags].sort(),
      rows_total: rows.size,
    },
    sides,
    kept,
    q,
    place,
    page.map((id) => known.get(id)!),
  );
};
