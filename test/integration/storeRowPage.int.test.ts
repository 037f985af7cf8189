import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../../processors/core/prng.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';
import { openClickHouse, type StoreClient } from '../../sinks/clickhouse/connection.ts';
import { migrate } from '../../sinks/clickhouse/migrate.ts';
import { trialToRow } from '../../sinks/clickhouse/rows/trialRow.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import type { Querier } from '../../sinks/clickhouse/queries/select.ts';
import type { ExplorerView } from '../../web/data.ts';
import { explorerView } from '../../web/explorerView.ts';
import { RowQuery, rowPage, SORTS } from '../../web/rowPage.ts';
import { keptCountedRows, keptRowFacets, rowPageFromStore } from '../../web/storeRows.ts';

/**
 * The Rows view's page from per-row counts (web/storeRows.ts) against the explorer over every stored trial
 * (`rowPage(explorerView(loadTrialsForReport(...)))`, what `/api/rows` answered before): equal, field for field,
 * for every sort order both ways, every filter, searches, paging edges and version choices, on a generated store
 * with what the counts cannot see on their own: copies of one trial (unmerged), conflicting re-sends of one event
 * id, two trials in one attempt slot, checks answered in different orders, retracted runs (a planned run, a
 * confirmation run, every run of a version on a row), ungraded verdicts, and means whose sum depends on its order.
 * A page reads only the explorer's columns of its trials, and the facets kept for a scope give the same answers.
 */

const dir = mkdtempSync(join(tmpdir(), 'passk-store-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 2, 1);
const ROWS = 240;
const BASE = { suite: 'sr', dataset_version: 'd1' };
const CATEGORIES = ['wrong_tool', 'bad_arguments', 'retrieval_miss'] as const;

const generate = (): TrialRecorded[] => {
  const rng = createRng(33);
  const out: TrialRecorded[] = [];
  let seq = 0;
  const add = (row: number, version: string, run: string, attempt: number, over: Partial<TrialRecorded> = {}) => {
    seq++;
    const at = T0 + row * 1000 + Math.floor(rng.next() * 900);
    const passRate = version === 'v1' ? 0.8 : version === 'v2' ? 0.6 : 0.5;
    const passed = rng.next() < 0.05 ? null : rng.next() < passRate || (row % 4 === 0 && version === 'v1');
    const checks =
      row % 5 === 0
        ? []
        : row % 14 === 0 && rng.next() < 0.5
          ? [
              { name: 'tool', answer: rng.next() < 0.5 ? 'lookup' : 'refund' },
              { name: 'window', answer: rng.next() < 0.8 },
            ]
          : [
              { name: 'window', answer: rng.next() < 0.8 },
              ...(row % 3 === 0 ? [{ name: 'tool', answer: rng.next() < 0.9 ? 'lookup' : 'refund' }] : []),
              ...(row % 11 === 0 ? [{ name: 'amount', answer: Math.floor(rng.next() * 3) }] : []),
            ];
    out.push({
      event_id: deterministicEventId(at, 'store-rows', seq),
      type: 'TrialRecorded',
      schema_version: 1,
      occurred_at: at,
      producer: 'passk-test/0',
      ...BASE,
      row_id: `r${row}`,
      run_id: run,
      attempt,
      agent: { version, model: 'm' },
      ...(row % 13 === 0 ? {} : { input: row % 37 === 1 ? `İade Parcel ${row}` : `Parcel number ${row}` }),
      ...(row % 6 === 0 ? { expected: row % 12 === 0 ? 'Refund' : 'deny' } : {}),
      ...(row % 17 === 0
        ? {}
        : {
            output: row % 41 === 2 ? `${'\u212A'}elvin out` : `out ${Math.floor(rng.next() * (row % 3 === 0 ? 1 : 3))}`,
          }),
      passed,
      checks,
      ...(passed === false && row % 2 === 0 ? { failure_category: CATEGORIES[row % 3]! } : {}),
      // tenths and thousandths whose sum depends on its order; equal means on many rows (ties)
      ...(row % 19 === 0 ? {} : { latency_ms: row % 4 === 0 ? 100 : 100 + Math.floor(rng.next() * 1000) / 10 }),
      ...(row % 8 === 0 ? {} : { cost_usd: row % 5 === 0 ? 0.003 : Math.floor(rng.next() * 10) * 0.0007 }),
      tags: [...(row % 17 === 0 ? ['must_not_break'] : []), ...(row % 9 === 0 && version === 'v2' ? ['vip'] : [])],
      ...over,
    });
  };
  for (let row = 0; row < ROWS; row++)
    for (const version of ['v1', 'v2', 'v3']) {
      if (version === 'v2' && row % 29 === 3) continue;
      if (version === 'v1' && row % 31 === 5) continue;
      const planned = row % 23 === 0 ? 2 : 5;
      for (let a = 0; a < planned; a++) add(row, version, 'run-1', a);
      if (row % 9 === 0) for (let a = 0; a < 3; a++) add(row, version, `Confirm-${version}`, a);
      if (row % 10 === 0) add(row, version, 'run-1', 0, { passed: !out[out.length - 1]!.passed }); // a second in slot 0
      if (row % 50 === 7) add(row, version, 'run-2', 0); // a run retracted below
    }
  return out;
};

/** Every query the test asks: each sort both ways, every filter, searches, paging edges, version choices. */
const QUERIES: Record<string, string>[] = [
  {},
  ...SORTS.flatMap((sort): Record<string, string>[] => [
    { sort },
    { sort, dir: 'desc' },
    { sort, dir: 'desc', candidate: 'v3', limit: '37' },
  ]),
  ...['stable_correct', 'stable_wrong', 'flip', 'unclassified'].flatMap((c): Record<string, string>[] => [
    { from: c },
    { to: c, sort: 'b.rate' },
  ]),
  { tag: 'vip' },
  { tag: 'must_not_break', baseline: 'v2', candidate: 'v3' },
  { tag: 'nothing' },
  { check: 'window' },
  { check: 'tool', sort: 'c.class', dir: 'desc' },
  { category: 'wrong_tool' },
  { category: 'retrieval_miss', baseline: 'v3', candidate: 'v1' },
  { ids: 'r1,r7,r57,r10,nope' },
  { q: 'parcel' },
  { q: 'PARCEL 1' },
  { q: 'kelvin' },
  { q: 'iade' },
  { q: 'İade' },
  { q: 'refund out' },
  { q: 'r2 deny', sort: 'c.latency' },
  { q: 'resent' },
  { q: 'nowhere' },
  // a search beside the counts for the sides the query names: used, or asked again when the scope picks others
  { q: 'out 2', baseline: 'v3', candidate: 'v1' },
  { q: 'parcel 1', baseline: 'v1', candidate: 'v2', to: 'flip', sort: 'b.latency' },
  { q: 'kelvin', baseline: 'v9', candidate: 'v2' },
  { q: 'out 1', baseline: 'v2', candidate: 'v7' },
  { q: 'refund out', baseline: 'v2', candidate: 'v2' },
  { q: 'İade', baseline: 'v1', candidate: 'v3', limit: '5', offset: '1' },
  { limit: '1' },
  { limit: '1000' },
  { offset: '239' },
  { offset: '240' },
  { offset: '5000', limit: '3' },
  { row: 'r150', limit: '20' },
  { row: 'r150', limit: '20', offset: '0' },
  { row: 'r239', limit: '7', sort: 'c.cost', dir: 'desc' },
  { row: 'r0', to: 'flip' },
  { row: 'nope' },
  { baseline: 'v3' },
  { baseline: 'v2', candidate: 'v2' },
  { baseline: 'v9', candidate: 'v8' },
];

/**
 * The client, counting the stored trials each query reads into Node (their row-id filter; 0 = every row), with
 * the text of those queries, and the queries of the check names (a facet: `ARRAY JOIN` of every trial's checks).
 */
const counting = (client: Querier) => {
  const reads: number[] = [];
  const texts: string[] = [];
  let checkNames = 0;
  let counts = 0;
  const q: Querier = {
    query: ((params: Parameters<Querier['query']>[0]) => {
      const p = params.query_params as { row_ids?: string[] } | undefined;
      if (params.query.includes('FROM trials FINAL') && p?.row_ids) {
        reads.push(p.row_ids.length);
        texts.push(params.query);
      }
      if (params.query.includes('ARRAY JOIN')) checkNames++;
      if (params.query.includes('GROUP BY agent_version, row_id')) counts++;
      return client.query(params);
    }) as Querier['query'],
  };
  return { client: q, reads, texts, checkNames: () => checkNames, counts: () => counts };
};

/** Columns of `trials` that no part of a Rows page shows (the explorer reads none of them). */
const UNSHOWN = ['actions', 'retrieved_refs', 'error_message', 'grader_kind', 'agent_model', 'tokens_input', 'score'];

for (const c of storeTargets(dir, 'passk_store_rows_test'))
  describe.skipIf(c.skip !== undefined)(onStore('the Rows page from per-row counts on', c), () => {
    let store: StoreClient;
    beforeAll(async () => {
      store = await openClickHouse(c.target);
      await migrate(store.client);
      const trials = generate();
      const body = (ts: readonly TrialRecorded[]) =>
        Buffer.from(ts.map((t) => JSON.stringify(trialToRow(t))).join('\n') + '\n');
      await store.insertJsonRows('trials', body(trials));
      const retraction = (row_id: string, agent_version: string, run_id: string, i: number) => ({
        event_id: deterministicEventId(T0, 'retraction', i),
        occurred_at: (T0 + 10_000_000) / 1000,
        producer: 'passk-test/0',
        schema_version: 1,
        retraction_id: `x${i}`,
        run_id,
        ...BASE,
        agent_version,
        row_id,
        reason: 'test',
        retracted_by: 'test',
        trials: 1,
      });
      const retracted = [
        retraction('r18', 'v2', 'Confirm-v2', 1),
        retraction('r40', 'v2', 'run-1', 2),
        retraction('r44', 'v3', 'run-1', 3), // v3 keeps no trial on r44
        ...[7, 57, 107, 157, 207].flatMap((r, i) =>
          ['v1', 'v2', 'v3'].map((v, j) => retraction(`r${r}`, v, 'run-2', 10 + i * 3 + j)),
        ),
      ];
      await store.insertJsonRows('retractions', Buffer.from(retracted.map((r) => JSON.stringify(r)).join('\n')));
      const rowOf = (t: TrialRecorded) => Number(t.row_id.slice(1));
      // copies of one in 3 trials of one row in 16, in a part of their own (unmerged)
      const copies = trials.filter((t, i) => i % 3 === 0 && rowOf(t) % 16 === 1);
      await store.insertJsonRows('trials', body(copies), { insert_deduplicate: 0 });
      // conflicting re-sends on another row in 16: the same event id with another verdict, output, check and latency
      const resent = trials
        .filter((t, i) => i % 4 === 0 && rowOf(t) % 16 === 9)
        .map((t) => ({
          ...t,
          passed: !t.passed,
          output: 'resent',
          attempt: t.attempt + 100,
          checks: [{ name: 'resent_check', answer: true }],
          latency_ms: 1,
        }));
      await store.insertJsonRows('trials', body(resent), { insert_deduplicate: 0 });
    }, 120_000);
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    // what /api/rows answered before: the explorer over every trial of the scope (built once: the store does not move)
    let view: ExplorerView | undefined;
    const before = async (q: Record<string, string>) => {
      view ??= explorerView(
        BASE,
        await loadTrialsForReport(store.client, { suites: [BASE.suite], datasetVersions: [BASE.dataset_version] }),
      );
      return rowPage(view, RowQuery.parse(q));
    };

    it('answers every sort, filter, search and page exactly as the explorer over every trial', async () => {
      const all = await before({ limit: '1000' });
      // the store holds what the counts cannot answer alone
      expect(all.rows_total).toBe(ROWS);
      expect(all.versions).toEqual(['v1', 'v2', 'v3']);
      expect(all.rows.find((r) => r.row_id === 'r44')!.versions.v3).toBeUndefined();
      expect(all.rows.some((r) => Object.values(r.versions).some((v) => v.outputs.includes('resent')))).toBe(true);
      expect(all.checks).toContain('resent_check');
      let nonEmpty = 0;
      for (const q of QUERIES) {
        const want = await before(q);
        if (want.rows.length > 0) nonEmpty++;
        expect(await rowPageFromStore(store.client, { ...BASE, ...RowQuery.parse(q) }), JSON.stringify(q)).toEqual(
          want,
        );
      }
      expect(nonEmpty).toBeGreaterThan(QUERIES.length * 0.8);
    });

    it('reads the trials of the rows the counts cannot answer and of the page only', async () => {
      const { client, reads } = counting(store.client);
      const page = await rowPageFromStore(client, { ...BASE, ...RowQuery.parse({ limit: '10', sort: 'c.rate' }) });
      expect(page.rows).toHaveLength(10);
      // one read of the inexact rows (copies, re-sends, second trials in a slot, …), one of the page's others
      expect(reads.length).toBeLessThanOrEqual(2);
      expect(reads.every((n) => n > 0)).toBe(true);
      const read = reads.reduce((a, b) => a + b, 0);
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(ROWS / 2);
    });

    it('reads only the columns the explorer shows of those trials', async () => {
      const { client, texts } = counting(store.client);
      await rowPageFromStore(client, { ...BASE, ...RowQuery.parse({ limit: '10', q: 'parcel' }) });
      expect(texts.length).toBeGreaterThan(0);
      for (const text of texts) for (const column of UNSHOWN) expect(text).not.toMatch(new RegExp(`\\b${column}\\b`));
    });

    it('computes the facets of a scope once while the watermark stays, and again when it moves', async () => {
      const { client, checkNames } = counting(store.client);
      let mark = 'w1';
      const facets = keptRowFacets(() => Promise.resolve(mark));
      // every filter and sort kind after a first page: the kept facets give the explorer's answer each time
      const asked: Record<string, string>[] = [
        {},
        { check: 'window' },
        { tag: 'vip', sort: 'c.latency' },
        { category: 'wrong_tool' },
        { q: 'refund out' },
      ];
      for (const q of asked)
        expect(await rowPageFromStore(client, { ...BASE, ...RowQuery.parse(q) }, facets), JSON.stringify(q)).toEqual(
          await before(q),
        );
      expect(checkNames()).toBe(1);
      // another scope has facets of its own
      const other = { suite: 'sr', dataset_version: 'none', ...RowQuery.parse({}) };
      expect((await rowPageFromStore(client, other, facets)).checks).toEqual([]);
      expect(checkNames()).toBe(2);
      await rowPageFromStore(client, { ...BASE, ...RowQuery.parse({ offset: '200' }) }, facets);
      expect(checkNames()).toBe(2);
      mark = 'w2';
      expect(await rowPageFromStore(client, { ...BASE, ...RowQuery.parse({}) }, facets)).toEqual(await before({}));
      expect(checkNames()).toBe(3);
    });

    it('counts the rows of a scope once per needs while the watermark stays, and again when it moves', async () => {
      const { client, counts } = counting(store.client);
      let mark = 'w1';
      const kept = keptCountedRows(() => Promise.resolve(mark));
      const page = (q: Record<string, string>) =>
        rowPageFromStore(client, { ...BASE, ...RowQuery.parse(q) }, undefined, kept);
      // page turns, filters, a search and sorts of the same needs: one counts query, the explorer's answer each time
      const plain: Record<string, string>[] = [
        {},
        { offset: '200' },
        { tag: 'vip', sort: 'c.rate', dir: 'desc' },
        { category: 'wrong_tool', limit: '10' },
        { q: 'refund out' },
        { from: 'stable_correct', to: 'flip', sort: 'b.class' },
      ];
      for (const q of plain) expect(await page(q), JSON.stringify(q)).toEqual(await before(q));
      expect(counts()).toBe(1);
      // ten at once share the answer being computed
      mark = 'w2';
      const ten = await Promise.all(Array.from({ length: 10 }, (_, i) => page({ offset: String(i * 20) })));
      for (const [i, p] of ten.entries()) expect(p).toEqual(await before({ offset: String(i * 20) }));
      expect(counts()).toBe(2);
      // other needs (the flipping checks, the means) have counts of their own
      const others: Record<string, string>[] = [
        { check: 'window' },
        { check: 'tool', offset: '5' },
        { sort: 'c.latency' },
      ];
      for (const q of others) expect(await page(q), JSON.stringify(q)).toEqual(await before(q));
      expect(counts()).toBe(4);
      // the watermark moves: counted again
      mark = 'w3';
      expect(await page({ sort: 'b.rate' })).toEqual(await before({ sort: 'b.rate' }));
      expect(counts()).toBe(5);
      expect(await page({})).toEqual(await before({}));
      expect(counts()).toBe(5);
    });

    it('has an empty page for a scope without trials', async () => {
      const q = { suite: 'sr', dataset_version: 'none', ...RowQuery.parse({}) };
      const empty = rowPage(explorerView(q, []), RowQuery.parse({}));
      expect(await rowPageFromStore(store.client, q)).toEqual(empty);
      expect(empty).toMatchObject({ rows: [], total: 0, baseline: null, candidate: null });
    });
  });
