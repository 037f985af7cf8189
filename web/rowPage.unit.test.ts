import { describe, expect, it } from 'vitest';
import type { ExplorerRow, ExplorerVersion, ExplorerView } from './data.ts';
import { RowQuery, rowPage } from './rowPage.ts';

const version = (cls: string, c: number, extra: Partial<ExplorerVersion> = {}): ExplorerVersion => ({
  class: cls,
  n: 3,
  c,
  attempts: 3,
  flipping_checks: [],
  output_flip: null,
  failure_categories: [],
  outputs: [],
  mean_latency_ms: null,
  mean_cost_usd: null,
  ...extra,
});
const CLASSES = ['stable_correct', 'flip', 'stable_wrong'];
/** n rows r00000…: the baseline's class cycles, the candidate keeps row 7 (and every 7th) from flipping. */
const view = (n: number): ExplorerView => ({
  suite: 's',
  dataset_version: 'd',
  versions: ['v1', 'v2'],
  checks: ['window'],
  failure_categories: ['timeout'],
  rows: Array.from({ length: n }, (_, i): ExplorerRow => ({
    row_id: `r${String(i).padStart(5, '0')}`,
    input: i === 42 ? 'the blue parcel' : `input ${i}`,
    expected: null,
    tags: i % 10 === 0 ? ['must_not_break'] : [],
    must_not_break: i % 10 === 0,
    versions: {
      v1: version(CLASSES[i % 3]!, 3 - (i % 3), { mean_latency_ms: i }),
      v2: version(i % 7 === 0 ? 'stable_correct' : 'flip', 2, { failure_categories: i % 5 ? [] : ['timeout'] }),
    },
  })),
});
const page = (v: ExplorerView, q: Record<string, string> = {}) => rowPage(v, RowQuery.parse(q));

describe('rowPage', () => {
  it('answers a bounded page of a large scope, with the count the filters keep', () => {
    const v = view(100_000);
    const p = page(v, { limit: '50', offset: '100' });
    expect(p.rows.map((r) => r.row_id)).toEqual(v.rows.slice(100, 150).map((r) => r.row_id));
    expect(p).toMatchObject({ total: 100_000, rows_total: 100_000, offset: 100, limit: 50, baseline: 'v1' });
    expect(page(v).rows).toHaveLength(200);
    expect(() => RowQuery.parse({ limit: '1001' })).toThrow();
    expect(page(v, { offset: '99990' }).rows).toHaveLength(10);
  });

  it('filters by class on each side, tag, category and words, as the Rows view did in the page', () => {
    const v = view(100);
    const ids = (q: Record<string, string>) =>
      page(v, { limit: '1000', ...q }).rows.map((r) => Number(r.row_id.slice(1)));
    const all = Array.from({ length: 100 }, (_, i) => i);
    expect(ids({ from: 'flip', to: 'stable_correct' })).toEqual(all.filter((i) => i % 3 === 1 && i % 7 === 0));
    expect(ids({ tag: 'must_not_break' })).toEqual(all.filter((i) => i % 10 === 0));
    expect(ids({ category: 'timeout' })).toEqual(all.filter((i) => i % 5 === 0));
    expect(ids({ q: 'BLUE parcel' })).toEqual([42]);
    expect(ids({ ids: 'r00003,r00001' })).toEqual([1, 3]);
    expect(page(v, { to: 'flip' }).total).toBe(all.filter((i) => i % 7 !== 0).length);
  });

  it('sorts by a side’s field either way, ties by row id, rows without the field last', () => {
    const v = view(9);
    const ids = (q: Record<string, string>) => page(v, q).rows.map((r) => r.row_id.slice(-1));
    expect(ids({ sort: 'b.latency', dir: 'desc' })).toEqual(['8', '7', '6', '5', '4', '3', '2', '1', '0']);
    expect(ids({ sort: 'b.rate' })).toEqual(['2', '5', '8', '1', '4', '7', '0', '3', '6']);
    expect(ids({ sort: 'c.latency' })).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
  });

  it('opens on the page of a deep-linked row and names its neighbours among the kept rows, across pages', () => {
    const v = view(1000);
    const p = page(v, { row: 'r00450', limit: '100', to: 'stable_correct' });
    // kept: every 7th row; r00450 is not one of them
    expect(p.row_at).toBeNull();
    const q = page(v, { row: 'r00455', limit: '10', to: 'stable_correct' });
    expect(q.row_at).toEqual({ index: 65, prev: 'r00448', next: 'r00462' });
    expect(q.offset).toBe(60);
    expect(q.rows.map((r) => r.row_id)).toContain('r00455');
    const edge = page(v, { row: 'r00070', limit: '10', to: 'stable_correct' });
    // the first row of the second page: its previous row is on the first
    expect([edge.offset, edge.rows[0]!.row_id]).toEqual([10, 'r00070']);
    expect(edge.row_at).toEqual({ index: 10, prev: 'r00063', next: 'r00077' });
  });
});
