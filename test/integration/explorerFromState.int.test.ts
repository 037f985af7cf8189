import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../../processors/core/prng.ts';
import { fromRowStateChanged, toRowStateChanged } from '../../processors/folds/rowState.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { openClickHouse, type StoreClient } from '../../sinks/clickhouse/connection.ts';
import { eventToRow } from '../../sinks/clickhouse/index.ts';
import { migrate } from '../../sinks/clickhouse/migrate.ts';
import { MIGRATIONS } from '../../sinks/clickhouse/schema/migrations.ts';
import {
  explorerCountsFrom,
  explorerCountsFromTrials,
  type ExplorerCount,
  type ExplorerCountsFrom,
  type ExplorerNeeds,
} from '../../sinks/clickhouse/queries/explorerCounts.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import { explorerView } from '../../web/explorerView.ts';
import { RowQuery, rowPage, SORTS } from '../../web/rowPage.ts';
import { rowPageFromStore } from '../../web/storeRows.ts';
import { rowStateWriter } from '../helpers/rowStateWriter.ts';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';

/**
 * The Rows view's counts (`/api/rows`) from the processors' row state (`row_state.explorer`, migration 20: each
 * attempt record with its trial's failure category, latency and cost) when it is proved to hold exactly the stored
 * trials with those, and from every trial when it is not (issue #32): the same counts and the same pages either way.
 * The store is written as the processors write it (the real fold, `evolveRow`, each row state it emits, retractions
 * through `retractRow`). Row states written without their extras (by a passk before migration 20, or restored from
 * its changelog) fail the proof and the counts come from the trials; so does a row state lagging its trials. A
 * property then draws trials (categories, latencies, costs, re-runs, confirmation runs) and retractions at random.
 */

const dir = mkdtempSync(join(tmpdir(), 'passk-explorer-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 5, 1);
const ROWS = 90;
const BASE = { suite: 'ex', dataset_version: 'd1' };
const PRODUCER = 'passk-test/0';
const CATEGORIES = ['wrong_tool', 'bad_arguments', 'retrieval_miss'] as const;

const generate = (run: string, rows: number, seed: number): TrialRecorded[] => {
  const rng = createRng(seed);
  const out: TrialRecorded[] = [];
  const add = (row: number, version: string, runId: string, attempt: number) => {
    const at = T0 + seed * 10_000_000 + row * 1000 + Math.floor(rng.next() * 900);
    const passed = rng.next() < 0.05 ? null : rng.next() < (version === 'v1' ? 0.8 : 0.6) || row % 4 === 0;
    const checks =
      row % 5 === 0
        ? []
        : row % 7 === 0 && rng.next() < 0.5
          ? [
              { name: 'tool', answer: rng.next() < 0.5 ? 'lookup' : 'refund' },
              { name: 'window', answer: rng.next() < 0.8 },
            ]
          : [
              { name: 'window', answer: rng.next() < 0.8 },
              { name: 'tool', answer: rng.next() < 0.9 ? 'lookup' : 'refund' },
            ];
    out.push({
      event_id: deterministicEventId(at, 'explorer-state', seed, out.length),
      type: 'TrialRecorded',
      schema_version: 1,
      occurred_at: at,
      producer: PRODUCER,
      ...BASE,
      row_id: `r${row}`,
      run_id: runId,
      attempt,
      agent: { version, model: 'm' },
      ...(row % 13 === 0 ? {} : { output: `out ${Math.floor(rng.next() * (row % 3 === 0 ? 1 : 3))}` }),
      passed,
      checks,
      ...(passed === false && row % 2 === 0 ? { failure_category: CATEGORIES[(row + attempt) % 3]! } : {}),
      // tenths and thousandths whose sum depends on its order; equal means on many rows (ties)
      ...(row % 19 === 0 ? {} : { latency_ms: row % 4 === 0 ? 100 : 100 + Math.floor(rng.next() * 1000) / 10 }),
      ...(row % 8 === 0 ? {} : { cost_usd: row % 5 === 0 ? 0.003 : Math.floor(rng.next() * 10) * 0.0007 }),
      ...(row % 17 === 0 ? { tags: ['must_not_break'] } : row % 9 === 0 ? { tags: ['vip'] } : {}),
    });
  };
  for (let row = 0; row < rows; row++)
    for (const version of ['v1', 'v2', 'v3']) {
      if (version === 'v2' && row % 29 === 3) continue;
      for (let a = 0; a < 5; a++) add(row, version, run, a);
      if (row % 9 === 0) for (let a = 0; a < 3; a++) add(row, version, `Confirm-${version}-${run}`, a);
      if (row % 10 === 0) add(row, version, run, 0); // another answer for slot 0: the fold refuses it
    }
  return out;
};

const retraction = (row_id: string, run_id: string, i: number, version = 'v2'): RunRetracted => ({
  event_id: deterministicEventId(T0, 'explorer-state-retraction', i),
  type: 'RunRetracted',
  schema_version: 1,
  occurred_at: T0 + 99_000_000 + i,
  producer: PRODUCER,
  retraction_id: `x${i}`,
  run_id,
  ...BASE,
  agent_version: version,
  row_id,
  reason: 'test',
  retracted_by: 'test',
  trials: 1,
});

/** A row state as an older passk wrote it: attempt records without category, latency or cost. */
const withoutExtras = (e: RowStateChanged): RowStateChanged => ({
  ...e,
  attempt_records: e.attempt_records.map(({ failure_category, latency_ms, cost_usd, ...a }) => {
    void failure_category;
    void latency_ms;
    void cost_usd;
    return a;
  }),
});

const NEEDS: ExplorerNeeds[] = [
  { checks: true, means: true },
  { checks: false, means: false },
  { checks: true, means: false },
  { checks: false, means: true },
];

/** What the counts say of a row, by (version, row): an inexact row is folded by the explorer from its trials. */
const byKey = (rows: readonly ExplorerCount[]) =>
  new Map(rows.map((r) => [`${r.agent_version}/${r.row_id}`, { ...r, tags: [...r.tags].sort() }]));

const QUERIES: Record<string, string>[] = [
  {},
  ...SORTS.flatMap((sort): Record<string, string>[] => [{ sort }, { sort, dir: 'desc', candidate: 'v3' }]),
  { from: 'flip' },
  { to: 'stable_wrong', sort: 'c.latency' },
  { tag: 'vip' },
  { tag: 'must_not_break', baseline: 'v2', candidate: 'v3', sort: 'b.cost' },
  { check: 'window', sort: 'c.cost', dir: 'desc' },
  { check: 'tool' },
  { category: 'wrong_tool', sort: 'b.latency' },
  { category: 'retrieval_miss', baseline: 'v3', candidate: 'v1' },
  { q: 'out 1', sort: 'c.latency' },
  { limit: '1000' },
];

for (const c of storeTargets(dir, 'passk_explorer_state_test'))
  describe.skipIf(c.skip !== undefined)(onStore('the Rows counts from the row state or the trials on', c), () => {
    let store: StoreClient;
    /** While set: row states as a store before migration 20 takes them (no `attempt_extras` column). */
    let before20 = false;
    const { states, write, fold, retract } = rowStateWriter({
      store: () => store,
      producer: PRODUCER,
      before20: () => before20,
    });

    /** The counts from the row state or the trials (`from`), equal to every trial's; pages equal to the explorer's. */
    const expectSame = async (scope: typeof BASE, from: ExplorerCountsFrom, queries = QUERIES) => {
      for (const needs of NEEDS) {
        const got = await explorerCountsFrom(store.client, scope, needs);
        expect(got.from, JSON.stringify(needs)).toBe(from);
        const want = byKey(await explorerCountsFromTrials(store.client, scope, needs));
        const have = byKey(got.rows);
        expect([...have.keys()].sort()).toEqual([...want.keys()].sort());
        for (const [k, r] of have) if (r.exact && want.get(k)!.exact) expect(r, k).toEqual(want.get(k));
      }
      const view = explorerView(
        scope,
        await loadTrialsForReport(store.client, { suites: [scope.suite], datasetVersions: [scope.dataset_version] }),
      );
      for (const q of queries)
        expect(await rowPageFromStore(store.client, { ...scope, ...RowQuery.parse(q) }), JSON.stringify(q)).toEqual(
          rowPage(view, RowQuery.parse(q)),
        );
    };

    beforeAll(async () => {
      store = await openClickHouse(c.target);
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 20) });
    }, 120_000);
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    it('answers from the trials while row states lack the extras (stored before migration 20, or by an older passk), from the row state once they carry them', async () => {
      const { taken, emitted } = fold(generate('run-1', ROWS, 1));
      expect(emitted.some((e) => e.attempt_records.some((a) => a.latency_ms !== undefined))).toBe(true);
      await write(taken);
      // the row states as a store before migration 20 holds them (no attempt_extras column)
      before20 = true;
      await write(emitted);
      before20 = false;
      expect((await migrate(store.client)).applied).toEqual([20, 21]);
      await expectSame(BASE, 'trials');

      // the same row states written by a passk whose attempt records carry no extras (an old changelog restored)
      const restored = [...states.values()].map((s) =>
        withoutExtras(toRowStateChanged(fromRowStateChanged(withoutExtras(toRowStateChanged(s, PRODUCER))), PRODUCER)),
      );
      await write(restored);
      await expectSame(BASE, 'trials', [{}]);

      // the fold's own, carrying them (the same seqs: the last written wins)
      await write([...states.values()].map((s) => toRowStateChanged(s, PRODUCER)));
      await expectSame(BASE, 'row_state');
      const counted = await explorerCountsFrom(store.client, BASE);
      expect(counted.rows.some((r) => r.exact && r.failure_categories.length > 1)).toBe(true);
      expect(counted.rows.some((r) => r.exact && r.flipping_checks.length > 0)).toBe(true);
      expect(counted.rows.some((r) => r.exact && r.mean_latency_ms !== null && r.mean_cost_usd !== null)).toBe(true);
      expect(counted.rows.some((r) => r.exact && r.mean_latency_ms === null)).toBe(true);
      expect(counted.rows.some((r) => !r.exact)).toBe(true);
    }, 120_000);

    it('carries the extras through the changelog: a restored row state writes the same row', async () => {
      for (const s of states.values()) {
        const e = toRowStateChanged(s, PRODUCER);
        expect(eventToRow(toRowStateChanged(fromRowStateChanged(e), PRODUCER))).toEqual(eventToRow(e));
      }
    });

    it('answers from the trials while the row state lags them or a retraction, from the row state once caught up', async () => {
      const { taken, emitted } = fold(generate('run-2', 12, 2));
      await write(taken);
      await expectSame(BASE, 'trials', [{}, { sort: 'c.latency' }]);
      await write(emitted);
      await expectSame(BASE, 'row_state');

      // retractions: of a confirmation run, of a planned run, of every run of v3 on a row
      const late = [
        retraction('r18', 'Confirm-v2-run-1', 1),
        retraction('r7', 'run-2', 2),
        retraction('r40', 'run-1', 3, 'v3'),
      ];
      await write(late);
      await expectSame(BASE, 'trials', [{}, { category: 'wrong_tool' }]);
      await write(late.map(retract));
      await expectSame(BASE, 'row_state');

      // an unmerged copy of a trial the row state holds
      await write(taken.slice(0, 1), { insert_deduplicate: 0 });
      await expectSame(BASE, 'trials', [{}, { sort: 'b.cost' }]);
    }, 120_000);

    it('answers as every trial does on random trials, extras, re-runs and retractions, from the trials while a batch lags', async () => {
      const attempt = fc.record({
        row: fc.integer({ min: 0, max: 4 }),
        version: fc.constantFrom('v1', 'v2'),
        run: fc.constantFrom('run-a', 'run-b', 'confirm-a'),
        attempt: fc.integer({ min: 0, max: 3 }),
        passed: fc.constantFrom(true, false, null),
        output: fc.constantFrom(undefined, 'a', 'b'),
        checks: fc.array(
          fc.record({ name: fc.constantFrom('w', 't'), answer: fc.constantFrom<boolean | string>(true, false, 'x') }),
          { maxLength: 3 },
        ),
        category: fc.constantFrom(undefined, ...CATEGORIES),
        latency: fc.option(fc.constantFrom(0, 0.1, 0.2, 0.3, 100.7, 1e-9, 3.3), { nil: undefined }),
        cost: fc.option(fc.constantFrom(0, 0.0007, 0.0021, 0.003, 1.1), { nil: undefined }),
        tag: fc.constantFrom(undefined, 'vip', 'must_not_break'),
        at: fc.integer({ min: 0, max: 3 }),
      });
      const retracted = fc.record({
        row: fc.integer({ min: 0, max: 4 }),
        version: fc.constantFrom('v1', 'v2'),
        run: fc.constantFrom('run-a', 'run-b', 'confirm-a'),
      });
      let draw = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(attempt, { minLength: 1, maxLength: 30 }),
          fc.array(retracted, { maxLength: 2 }),
          fc.array(attempt, { minLength: 1, maxLength: 6 }),
          async (first, retractions, lagging) => {
            const scope = { suite: `prop${++draw}`, dataset_version: 'd1' };
            const trialOf = (a: (typeof first)[number], i: number): TrialRecorded => ({
              // a few trials share an event time: the means' order then goes by event id
              event_id: deterministicEventId(T0 + a.at, 'explorer-property', draw, i),
              type: 'TrialRecorded',
              schema_version: 1,
              occurred_at: T0 + a.at,
              producer: PRODUCER,
              ...scope,
              row_id: `r${a.row}`,
              run_id: a.run,
              attempt: a.attempt,
              agent: { version: a.version, model: 'm' },
              ...(a.output === undefined ? {} : { output: a.output }),
              passed: a.passed,
              checks: a.checks,
              ...(a.category === undefined ? {} : { failure_category: a.category }),
              ...(a.latency === undefined ? {} : { latency_ms: a.latency }),
              ...(a.cost === undefined ? {} : { cost_usd: a.cost }),
              ...(a.tag === undefined ? {} : { tags: [a.tag] }),
            });
            const pages: Record<string, string>[] = [
              {},
              { sort: 'c.latency' },
              { sort: 'b.cost', dir: 'desc' },
              { category: 'wrong_tool' },
            ];
            const batch = fold(first.map(trialOf));
            await write(batch.taken);
            await write(batch.emitted);
            const rs = retractions.map((r, i): RunRetracted => ({
              ...retraction(`r${r.row}`, r.run, 1000 * draw + i, r.version),
              ...scope,
            }));
            await write(rs);
            await write(rs.map(retract));
            await expectSame(scope, 'row_state', pages);
            const late = fold(lagging.map((a, i) => trialOf(a, first.length + i)));
            await write(late.taken);
            await expectSame(scope, late.taken.length > 0 ? 'trials' : 'row_state', pages);
            await write(late.emitted);
            await expectSame(scope, 'row_state', pages);
          },
        ),
        { numRuns: 10, seed: 32 },
      );
    }, 300_000);
  });
