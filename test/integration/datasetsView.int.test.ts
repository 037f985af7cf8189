import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore, type Store } from '../../deploy/store.ts';
import type { DatasetRowUpserted } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { createClickHouseRowSink } from '../../sinks/clickhouse/index.ts';
import { datasetRows, datasetVersions } from '../../sinks/clickhouse/queries/datasets.ts';
import type { Querier } from '../../sinks/clickhouse/queries/select.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import type { DatasetRowView, DatasetVersionView } from '../../web/data.ts';
import { datasetIds } from '../../web/queries.ts';

/**
 * The Datasets view's answer (`/api/datasets`) from the store's aggregates, against the computation it replaced
 * (issue #32): every row of every version read into Node by `datasetRows`, the must-not-break rows and the removed
 * rows picked there. On datasets with several versions, tags, removals, re-additions, production provenance, two
 * upserts of a row in one version and two versions that start in the same millisecond.
 */
const T0 = Date.UTC(2026, 11, 1, 9);
const HOUR = 3_600_000;
let seq = 0;
const MNB = 'must_not_break';
const upsert = (
  dataset_id: string,
  dataset_version: string,
  at: number,
  row_id: string,
  o: Partial<Pick<DatasetRowUpserted, 'tags' | 'provenance' | 'removed' | 'expected'>> = {},
): DatasetRowUpserted => ({
  event_id: deterministicEventId(at, 'DatasetRowUpserted', dataset_id, row_id, seq++),
  type: 'DatasetRowUpserted',
  schema_version: 1,
  occurred_at: at,
  producer: 'datasets-test',
  dataset_id,
  dataset_version,
  row_id,
  input: `input of ${row_id}`,
  expected: o.expected === undefined ? `expected of ${row_id}` : o.expected,
  tags: o.tags ?? [],
  provenance: o.provenance ?? { kind: 'manual' },
  ...(o.removed ? { removed: true } : {}),
});

// Dataset a, worked out by hand in the test below.
const a: DatasetRowUpserted[] = [
  ...Array.from({ length: 10 }, (_, i) =>
    upsert('a', '1', T0 + i, `a${i}`, { tags: i < 2 ? [MNB, 'refund'] : i % 2 ? ['refund'] : [] }),
  ),
  upsert('a', '2', T0 + HOUR, 'a0', { tags: [MNB, 'refund'], removed: true }),
  upsert('a', '2', T0 + HOUR + 1, 'a1', { tags: [MNB, 'refund'], expected: null }),
  upsert('a', '2', T0 + HOUR + 2, 'a2', { tags: ['shipping', MNB] }),
  upsert('a', '2', T0 + HOUR + 3, 'p1', {
    tags: [MNB],
    provenance: { kind: 'production_failure', trace_id: 't1', failure_event_id: 'f1', note: 'confirmed' },
  }),
  upsert('a', '3', T0 + 2 * HOUR, 'a0', { tags: ['refund'] }),
  upsert('a', '3', T0 + 2 * HOUR + 1, 'a3', { removed: true }),
  upsert('a', '3', T0 + 2 * HOUR + 2, 'a1', { tags: ['refund'] }),
  upsert('a', '3', T0 + 2 * HOUR + 3, 'p2', { provenance: { kind: 'production_failure', trace_id: 't2' } }),
  upsert('a', '4', T0 + 3 * HOUR, 'a5', { removed: true }),
  upsert('a', '4', T0 + 3 * HOUR + 1, 'a3', { removed: true }),
  upsert('a', '4', T0 + 3 * HOUR + 2, 'a2', { tags: [MNB] }),
  upsert('a', '4', T0 + 3 * HOUR + 3, 'a2', { tags: ['shipping'] }),
];

// Dataset b: versions x and y start in the same millisecond (ordered by name), y removes b0 a moment later.
const b = [
  upsert('b', 'x', T0, 'b0', { tags: [MNB] }),
  upsert('b', 'x', T0, 'b1', { tags: [MNB] }),
  upsert('b', 'y', T0, 'b2', { tags: [MNB] }),
  upsert('b', 'y', T0 + 1, 'b0', { tags: [MNB], removed: true }),
  upsert('b', 'z', T0 + HOUR, 'b1', { removed: true }),
];

// Dataset c: 60 rows over 6 versions, changed at random (a fixed linear congruential sequence).
let state = 7;
const next = (n: number) => {
  state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
  return state % n;
};
const c = Array.from({ length: 6 }, (_, v) =>
  Array.from({ length: v === 0 ? 60 : 15 }, (_, i) => {
    const row = v === 0 ? i : next(60);
    const kind = (['manual', 'import', 'production_failure'] as const)[next(3)]!;
    return upsert('c', `v${v}`, T0 + v * HOUR + i, `c${row}`, {
      tags: [...(next(3) === 0 ? [MNB] : []), ...(next(2) ? ['tag-x'] : [])],
      provenance: kind === 'production_failure' ? { kind, trace_id: `t-${row}`, note: `n${v}` } : { kind },
      removed: v > 0 && next(4) === 0,
    });
  }),
).flat();

/** The answer as `/api/datasets` computed it before issue #32: every row of every version read into Node. */
const readingEveryRow = async (client: Querier): Promise<DatasetVersionView[]> => {
  const out = [];
  for (const dataset_id of await datasetIds(client)) {
    let before = new Set<string>();
    for (const v of await datasetVersions(client, { dataset_id })) {
      const all = await datasetRows(client, { dataset_id, dataset_version: v.dataset_version });
      const rows = all.filter((r) => r.must_not_break);
      const view = (r: (typeof rows)[number]): DatasetRowView => ({
        row_id: r.row_id,
        tags: r.tags,
        expected: r.expected,
        provenance: {
          kind: r.provenance.kind,
          ...(r.provenance.trace_id ? { trace_id: r.provenance.trace_id } : {}),
          ...(r.provenance.note ? { note: r.provenance.note } : {}),
        },
      });
      const ids = new Set(all.map((r) => r.row_id));
      out.push({
        dataset_id,
        dataset_version: v.dataset_version,
        created_at: v.first_at,
        rows: v.rows,
        removed: [...before].filter((id) => !ids.has(id)).sort(),
        must_not_break: rows.map(view),
        from_production: rows.filter((r) => r.provenance.kind === 'production_failure').map(view),
      });
      before = ids;
    }
  }
  return out;
};

let dir: string;
let store: Store;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-datasets-'));
  store = await openStore(loadConfig({ dataDir: dir }, {}, dir));
  const sink = createClickHouseRowSink({ client: store.client });
  await sink.writeEvents([...a, ...b, ...c]);
  await sink.flush();
  await sink.close();
}, 120_000);

afterAll(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the Datasets view's answer from the store", () => {
  it('is the answer of reading every row of every version', async () => {
    const answer = await clickhouseDashboardData(store.client).datasets();
    expect(answer).toEqual(await readingEveryRow(store.client));
    const summary = (id: string) =>
      answer
        .filter((v) => v.dataset_id === id)
        .map((v) => [
          v.dataset_version,
          v.rows,
          v.must_not_break.map((r) => r.row_id),
          v.removed,
          v.from_production.map((r) => r.row_id),
        ]);
    expect(summary('a')).toEqual([
      ['1', 10, ['a0', 'a1'], [], []],
      ['2', 10, ['a1', 'a2', 'p1'], ['a0'], ['p1']],
      ['3', 11, ['a2', 'p1'], ['a3'], ['p1']],
      ['4', 10, ['p1'], ['a5'], ['p1']],
    ]);
    expect(answer.find((v) => v.dataset_id === 'a' && v.dataset_version === '2')!.must_not_break).toEqual([
      { row_id: 'a1', tags: [MNB, 'refund'], expected: null, provenance: { kind: 'manual' } },
      { row_id: 'a2', tags: ['shipping', MNB], expected: 'expected of a2', provenance: { kind: 'manual' } },
      {
        row_id: 'p1',
        tags: [MNB],
        expected: 'expected of p1',
        provenance: { kind: 'production_failure', trace_id: 't1', note: 'confirmed' },
      },
    ]);
    // x and y start together, so both hold y's upserts (b0 removed); z removes b1.
    expect(summary('b')).toEqual([
      ['x', 2, ['b1', 'b2'], [], []],
      ['y', 2, ['b1', 'b2'], [], []],
      ['z', 1, ['b2'], ['b1'], []],
    ]);
    // the random dataset exercises every case: removals, must-not-break rows and production ones in most versions
    const cs = answer.filter((v) => v.dataset_id === 'c');
    expect(cs.filter((v) => v.removed.length > 0).length).toBeGreaterThanOrEqual(3);
    expect(cs.every((v) => v.must_not_break.length > 0 && v.from_production.length > 0)).toBe(true);
  });

  it("counts each version's rows, must-not-break and production rows as its rows read one by one", async () => {
    for (const dataset_id of ['a', 'b', 'c']) {
      const events = [...a, ...b, ...c].filter((e) => e.dataset_id === dataset_id);
      const versions = await datasetVersions(store.client, { dataset_id });
      const expected = [];
      for (const v of versions) {
        const all = await datasetRows(store.client, { dataset_id, dataset_version: v.dataset_version });
        const changed = events.filter((e) => e.dataset_version === v.dataset_version);
        expected.push({
          dataset_version: v.dataset_version,
          first_at: Math.min(...changed.map((e) => e.occurred_at)),
          changed_rows: new Set(changed.map((e) => e.row_id)).size,
          rows: all.length,
          must_not_break_rows: all.filter((r) => r.must_not_break).length,
          from_production: all.filter((r) => r.provenance.kind === 'production_failure').length,
        });
      }
      expect(versions).toEqual(expected);
      expect(versions.map((v) => v.dataset_version)).toEqual([...new Set(events.map((e) => e.dataset_version))]);
    }
  });
});
