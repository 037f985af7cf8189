import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, DEFAULT_REPORT_OPTIONS } from '../../processors/core/report.ts';
import { createRng } from '../../processors/core/prng.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { openClickHouse, type StoreClient } from '../../sinks/clickhouse/connection.ts';
import { migrate } from '../../sinks/clickhouse/migrate.ts';
import { MIGRATIONS } from '../../sinks/clickhouse/schema/migrations.ts';
import { TRIAL_FINGERPRINT } from '../../sinks/clickhouse/schema/countsColumns.ts';
import { compareFromStore } from '../../sinks/clickhouse/queries/compare.ts';
import { reportGroupsFromStore } from '../../sinks/clickhouse/queries/report.ts';
import {
  countRows,
  rowCountsFromTrials,
  fingerprintsStored,
  TRIALS_PROOF_SQL,
  TRIALS_PROOF_STORED_SQL,
  type CountedRow,
  type CountsFrom,
  type RowCountsScope,
} from '../../sinks/clickhouse/queries/rowCounts.ts';
import {
  comparisonFromStore,
  reportFromStore,
  type StoreReportOptions,
} from '../../sinks/clickhouse/queries/storeReport.ts';
import { rowStateWriter } from '../helpers/rowStateWriter.ts';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';

/**
 * The per-row counts from the processors' row state (`row_state`) when it is proved to hold exactly the stored
 * trials, and from every trial when it is not (issue #32): the same answers either way. The store is written as
 * the processors write it: each trial the real fold (`evolveRow`) takes, then every row state it emitted (older
 * seqs too, unmerged: FINAL keeps the latest), retractions through `retractRow`. Then the row state is made to lag:
 * trials without their row states, a retraction without its row states, an unmerged copy of a trial. The first
 * row states are stored before migration 18 (their counts columns are computed when read), the later ones after
 * (computed on insert). A property then draws trials, re-runs and retractions at random, each draw in a suite of its
 * own: answered from the row state and equal to the trials' counts, then from the trials while a batch lags.
 */

const dir = mkdtempSync(join(tmpdir(), 'passk-row-counts-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 4, 1);
const ROWS = 120;
const BASE = { suite: 'rs', dataset_version: 'd1' };
const PRODUCER = 'passk-test/0';

/**
 * Trials of v1, v2, v3 with confirmation runs, ungraded verdicts, missing outputs, forbidden actions, checks in other
 * orders, one check name answered twice in an attempt, re-runs of a slot.
 */
const generate = (run: string, rows: number, seed: number): TrialRecorded[] => {
  const rng = createRng(seed);
  const out: TrialRecorded[] = [];
  const add = (row: number, version: string, runId: string, attempt: number) => {
    const at = T0 + seed * 10_000_000 + row * 1000 + Math.floor(rng.next() * 900);
    const checks =
      row % 5 === 0
        ? []
        : row % 23 === 2
          ? [
              { name: 'window', answer: true },
              { name: 'window', answer: rng.next() < 0.5 },
            ]
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
      event_id: deterministicEventId(at, 'row-counts-state', seed, out.length),
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
      passed: rng.next() < 0.05 ? null : rng.next() < (version === 'v1' ? 0.8 : 0.6) || row % 4 === 0,
      checks,
      ...(rng.next() < 0.05 ? { forbidden_actions: ['delete_account'] } : {}),
      ...(row % 17 === 0 ? { tags: ['must_not_break'] } : {}),
    });
  };
  for (let row = 0; row < rows; row++)
    for (const version of ['v1', 'v2', 'v3']) {
      if (version === 'v2' && row % 29 === 3) continue; // baseline only
      const planned = row % 19 === 0 ? 7 : 5;
      for (let a = 0; a < planned; a++) add(row, version, run, a);
      if (row % 9 === 0) for (let a = 0; a < 3; a++) add(row, version, `Confirm-${version}-${run}`, a);
      if (row % 10 === 0) add(row, version, run, 0); // another answer for slot 0: the fold refuses it
    }
  return out;
};

const retraction = (row_id: string, run_id: string, i: number): RunRetracted => ({
  event_id: deterministicEventId(T0, 'row-counts-state-retraction', i),
  type: 'RunRetracted',
  schema_version: 1,
  occurred_at: T0 + 99_000_000 + i,
  producer: PRODUCER,
  retraction_id: `x${i}`,
  run_id,
  ...BASE,
  agent_version: 'v2',
  row_id,
  reason: 'test',
  retracted_by: 'test',
  trials: 1,
});

const OPTIONS: [string, StoreReportOptions][] = [
  ['the default options', DEFAULT_REPORT_OPTIONS],
  [
    'ungraded as failure, two attempts to classify, k = 2',
    { ...DEFAULT_REPORT_OPTIONS, ungradedAsFailure: true, minAttempts: 2, k: 2 },
  ],
];

/** What a counts answer says of a row: an inexact row's counts are not to be read (its row is folded from its trials). */
const readable = (counts: Map<string, CountedRow[]>) =>
  [...counts].map(([v, rows]) => [v, rows.map((r) => (r.exact ? r : { row_id: r.row_id, exact: false }))]);

for (const c of storeTargets(dir, 'passk_row_counts_state_test'))
  describe.skipIf(c.skip !== undefined)(onStore('per-row counts from the row state or the trials on', c), () => {
    let store: StoreClient;
    /** Before migration 20 (`beforeAll`): row states as a store without `attempt_extras` takes them. */
    let before20 = false;
    const { write, fold, retract } = rowStateWriter({
      store: () => store,
      producer: PRODUCER,
      before20: () => before20,
    });

    /**
     * The counts and the answers built on them, each equal to what every trial gives; `from` where all versions'
     * counts come from, `fromV3V1` those of v3 and v1 only (their row states may be whole while v2's lag).
     */
    const expectTrialsAnswers = async (from: CountsFrom, fromV3V1: CountsFrom = from) => {
      for (const [, opts] of OPTIONS) {
        const scope: RowCountsScope = {
          ...BASE,
          ungradedAsFailure: opts.ungradedAsFailure,
          minAttempts: opts.minAttempts,
        };
        const counted = await countRows(store.client, scope);
        expect(counted.from).toBe(from);
        expect(readable(counted.rows)).toEqual(readable(await rowCountsFromTrials(store.client, scope)));
        const some = await countRows(store.client, { ...scope, versions: ['v3', 'v1'] });
        expect(some.from).toBe(fromV3V1);
        expect(readable(some.rows)).toEqual(
          readable(await rowCountsFromTrials(store.client, { ...scope, versions: ['v3', 'v1'] })),
        );

        const old = buildReport(
          await reportGroupsFromStore(store.client, { suites: [BASE.suite], datasetVersions: [BASE.dataset_version] }),
          opts,
        ).groups;
        expect(old.map((g) => g.agent_version)).toEqual(['v1', 'v2', 'v3']);
        expect(await reportFromStore(store.client, BASE, opts)).toEqual(old);
        const pair = { ...BASE, baseline: 'v1', candidate: 'v2' };
        expect(await comparisonFromStore(store.client, pair, opts)).toEqual(
          await compareFromStore(store.client, pair, opts),
        );
      }
    };

    beforeAll(async () => {
      store = await openClickHouse(c.target);
      // row states stored before migration 18 added their counts columns: those are computed when read
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 18) });
      before20 = true;
      // no background merge of trials until the fingerprint test merges them: a merge after migration 19 writes the
      // column into the old parts, which would make that test's "not every part holds it" depend on timing
      await store.client.command({ query: 'SYSTEM STOP MERGES trials' });
      const { taken, emitted } = fold(generate('run-1', ROWS, 1));
      await write(taken);
      await write(emitted);
      const retractions = [retraction('r18', 'Confirm-v2-run-1', 1), retraction('r40', 'run-1', 2)];
      await write(retractions);
      await write(retractions.map(retract));
      expect((await migrate(store.client)).applied).toEqual([18, 19, 20, 21]);
      before20 = false;
    }, 120_000);
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    it('answers from the row state when it holds every stored trial, as every trial does', async () => {
      const rows = await countRows(store.client, BASE);
      // what the counts path has to meet: rows the counts cannot answer (checks in other orders) and every kind
      const all = [...rows.rows.values()].flat();
      expect(all.some((r) => !r.exact)).toBe(true);
      expect(all.some((r) => r.exact && r.confirmation.attempts > 0 && r.planned.ungraded > 0)).toBe(true);
      expect(all.some((r) => r.exact && r.planned.forbidden_trials > 0)).toBe(true);
      expect(all.some((r) => r.exact && r.planned.checks.some((k) => 'flips' in k && k.flips))).toBe(true);
      expect(all.some((r) => r.exact && r.row_id === 'r2' && r.planned.checks.length === 1)).toBe(true);
      await expectTrialsAnswers('row_state');
    });

    it('answers from the trials while the row state lags them, and from the row state again once it caught up', async () => {
      // a unit half written: its trials, not yet their row states
      const { taken, emitted } = fold(generate('run-2', 12, 2));
      await write(taken);
      await expectTrialsAnswers('trials');
      await write(emitted);
      await expectTrialsAnswers('row_state');

      // a retraction of v2's run stored before the row states it changes: v1's and v3's are whole
      const late = retraction('r7', 'run-2', 3);
      await write([late]);
      await expectTrialsAnswers('trials', 'row_state');
      await write([retract(late)]);
      await expectTrialsAnswers('row_state');

      // an unmerged copy of a trial the row state holds (v1's)
      expect(taken[0]!.agent.version).toBe('v1');
      await write(taken.slice(0, 1), { insert_deduplicate: 0 });
      await expectTrialsAnswers('trials');
    });

    it('sums the fingerprints the trials hold once every part holds them (migration 19), with the same answers', async () => {
      // the stored form is the same query summing the column: the replace must have changed it
      expect(TRIALS_PROOF_STORED_SQL).not.toBe(TRIALS_PROOF_SQL);
      expect(TRIALS_PROOF_STORED_SQL).toContain('sum(fingerprint)');
      expect(TRIALS_PROOF_SQL).not.toContain('sum(fingerprint)');
      // the first trials were stored before migration 19 (merges stopped since): their parts compute the column
      expect(await fingerprintsStored(store.client)).toBe(false);
      await store.client.command({ query: 'SYSTEM START MERGES trials' });
      await store.client.command({ query: 'OPTIMIZE TABLE trials FINAL' });
      expect(await fingerprintsStored(store.client)).toBe(true);
      const rows = async (query: string, params: Record<string, unknown> = {}) =>
        (await store.client.query({ query, query_params: params, format: 'JSONCompactEachRow' })).json();
      expect(await rows(`SELECT count() FROM trials WHERE fingerprint != ${TRIAL_FINGERPRINT}`)).toEqual([[0]]);
      for (const versions of [[], ['v2']]) {
        const params = { ...BASE, versions, ungraded_as_failure: false };
        const stored = await rows(TRIALS_PROOF_STORED_SQL, params);
        expect(stored.length).toBeGreaterThan(0);
        expect(stored).toEqual(await rows(TRIALS_PROOF_SQL, params));
      }
      // the merge kept one of the copy's two trials: the row state holds every stored trial again
      await expectTrialsAnswers('row_state');
    });

    it('answers from the row state as every trial does on random trials, re-runs and retractions, and from the trials while a batch lags', async () => {
      const attempt = fc.record({
        row: fc.integer({ min: 0, max: 4 }),
        version: fc.constantFrom('v1', 'v2'),
        run: fc.constantFrom('run-a', 'run-b', 'confirm-a', 'CONFIRM-b'),
        attempt: fc.integer({ min: 0, max: 3 }),
        passed: fc.constantFrom(true, false, null),
        output: fc.constantFrom(undefined, 'a', 'b'),
        checks: fc.array(
          fc.record({ name: fc.constantFrom('w', 't'), answer: fc.constantFrom<boolean | string>(true, false, 'x') }),
          { maxLength: 3 },
        ),
        forbidden: fc.boolean(),
      });
      const retracted = fc.record({
        row: fc.integer({ min: 0, max: 4 }),
        version: fc.constantFrom('v1', 'v2'),
        run: fc.constantFrom('run-a', 'run-b', 'confirm-a', 'CONFIRM-b'),
      });
      let draw = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(attempt, { minLength: 1, maxLength: 40 }),
          fc.array(retracted, { maxLength: 3 }),
          fc.array(attempt, { minLength: 1, maxLength: 8 }),
          async (first, retractions, lagging) => {
            const scope = { suite: `prop${++draw}`, dataset_version: 'd1' };
            const trialOf = (a: (typeof first)[number], i: number): TrialRecorded => ({
              event_id: deterministicEventId(T0 + i, 'row-counts-property', draw, i),
              type: 'TrialRecorded',
              schema_version: 1,
              occurred_at: T0 + i,
              producer: PRODUCER,
              ...scope,
              row_id: `r${a.row}`,
              run_id: a.run,
              attempt: a.attempt,
              agent: { version: a.version, model: 'm' },
              ...(a.output === undefined ? {} : { output: a.output }),
              passed: a.passed,
              checks: a.checks,
              ...(a.forbidden ? { forbidden_actions: ['delete'] } : {}),
            });
            const expectEqual = async (from: CountsFrom) => {
              for (const ungradedAsFailure of [false, true]) {
                const counted = await countRows(store.client, { ...scope, ungradedAsFailure });
                expect(counted.from).toBe(from);
                expect(readable(counted.rows)).toEqual(
                  readable(await rowCountsFromTrials(store.client, { ...scope, ungradedAsFailure })),
                );
              }
            };
            const batch = fold(first.map(trialOf));
            await write(batch.taken);
            await write(batch.emitted);
            const rs = retractions.map((r, i): RunRetracted => ({
              ...retraction(`r${r.row}`, r.run, 1000 * draw + i),
              ...scope,
              agent_version: r.version,
            }));
            await write(rs);
            await write(rs.map(retract));
            await expectEqual('row_state');
            const late = fold(lagging.map((a, i) => trialOf(a, first.length + i)));
            await write(late.taken);
            await expectEqual(late.taken.length > 0 ? 'trials' : 'row_state');
            await write(late.emitted);
            await expectEqual('row_state');
          },
        ),
        { numRuns: 12, seed: 32 },
      );
    }, 300_000);
  });
