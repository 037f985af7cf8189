import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, DEFAULT_REPORT_OPTIONS } from '../../processors/core/report.ts';
import { createRng } from '../../processors/core/prng.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';
import { openClickHouse, type StoreClient } from '../../sinks/clickhouse/connection.ts';
import { migrate } from '../../sinks/clickhouse/migrate.ts';
import { trialToRow } from '../../sinks/clickhouse/rows/trialRow.ts';
import { compareFromStore } from '../../sinks/clickhouse/queries/compare.ts';
import { reportGroupsFromStore } from '../../sinks/clickhouse/queries/report.ts';
import type { Querier } from '../../sinks/clickhouse/queries/select.ts';
import { rowCounts } from '../../sinks/clickhouse/queries/rowCounts.ts';
import {
  comparisonFromStore,
  reportFromStore,
  sharedRowCounts,
  type CountsSource,
  type Rounds,
  type StoreReportOptions,
} from '../../sinks/clickhouse/queries/storeReport.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';

/**
 * The report and the comparison from per-row counts (storeReport.ts) against the core over every stored trial
 * (`buildReport` of `reportGroupsFromStore`, `compareFromStore`): equal, number for number, on a generated store
 * with what the counts cannot see on their own: copies of one trial (unmerged), two trials in one attempt slot,
 * confirmation runs, more planned attempts than the plan, confirmed regressions, ungraded verdicts, missing and
 * differing outputs, forbidden actions, checks answered in different orders, one check name answered twice in an
 * attempt, conflicting re-sends of one event id, rows on one side only.
 */

const dir = mkdtempSync(join(tmpdir(), 'passk-store-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 2, 1);
const ROWS = 240;
const BASE = { suite: 'sr', dataset_version: 'd1' };

/** Deterministic trials of three versions (v1, v2, v3) over ROWS rows, with every irregularity above. */
const generate = (): TrialRecorded[] => {
  const rng = createRng(32);
  const out: TrialRecorded[] = [];
  let seq = 0;
  const add = (row: number, version: string, run: string, attempt: number, over: Partial<TrialRecorded> = {}) => {
    seq++;
    const at = T0 + row * 1000 + Math.floor(rng.next() * 900);
    const passRate = version === 'v1' ? 0.8 : version === 'v2' ? 0.6 : 0.5;
    const checks =
      row % 5 === 0
        ? []
        : row % 43 === 2
          ? [
              { name: 'window', answer: true },
              { name: 'window', answer: row % 2 === 0 },
            ]
          : row % 7 === 0 && rng.next() < 0.5
            ? [
                { name: 'tool', answer: rng.next() < 0.5 ? 'lookup' : 'refund' },
                { name: 'window', answer: rng.next() < 0.8 },
              ]
            : [
                { name: 'window', answer: rng.next() < 0.8 },
                { name: 'tool', answer: rng.next() < 0.9 ? 'lookup' : 'refund' },
                ...(row % 11 === 0 ? [{ name: 'amount', answer: Math.floor(rng.next() * 3) }] : []),
              ];
    out.push({
      event_id: deterministicEventId(at, 'store-report', seq),
      type: 'TrialRecorded',
      schema_version: 1,
      occurred_at: at,
      producer: 'passk-test/0',
      ...BASE,
      row_id: `r${row}`,
      run_id: run,
      attempt,
      agent: { version, model: 'm' },
      ...(row % 13 === 0 ? {} : { output: `out ${Math.floor(rng.next() * (row % 3 === 0 ? 1 : 3))}` }),
      passed: rng.next() < 0.05 ? null : rng.next() < passRate || (row % 4 === 0 && version === 'v1'),
      checks,
      ...(rng.next() < 0.03 ? { forbidden_actions: ['delete_account'] } : {}),
      ...(row % 17 === 0 ? { tags: ['must_not_break'] } : {}),
      ...over,
    });
  };
  for (let row = 0; row < ROWS; row++)
    for (const version of ['v1', 'v2', 'v3']) {
      if (version === 'v2' && row % 29 === 3) continue; // baseline only
      if (version === 'v1' && row % 31 === 5) continue; // candidate only
      const planned = row % 19 === 0 ? 7 : row % 23 === 0 ? 2 : 5;
      for (let a = 0; a < planned; a++) add(row, version, 'run-1', a);
      if (row % 9 === 0) for (let a = 0; a < 3; a++) add(row, version, `Confirm-${version}`, a);
      if (row % 10 === 0) add(row, version, 'run-1', 0, { passed: !out[out.length - 1]!.passed }); // a second in slot 0
    }
  return out;
};

const OPTIONS: [string, StoreReportOptions][] = [
  ['the default options', DEFAULT_REPORT_OPTIONS],
  [
    'ungraded as failure, two attempts to classify, k = 2',
    { ...DEFAULT_REPORT_OPTIONS, ungradedAsFailure: true, minAttempts: 2, k: 2 },
  ],
];

for (const c of storeTargets(dir, 'passk_store_report_test'))
  describe.skipIf(c.skip !== undefined)(onStore('report and compare from per-row counts on', c), () => {
    let store: StoreClient;
    beforeAll(async () => {
      store = await openClickHouse(c.target);
      await migrate(store.client);
      const trials = generate();
      const body = (ts: readonly TrialRecorded[]) =>
        Buffer.from(ts.map((t) => JSON.stringify(trialToRow(t))).join('\n') + '\n');
      await store.insertJsonRows('trials', body(trials));
      // v2's confirmation run retracted on r18, and its planned run on r40 (the row keeps its confirmation run)
      const retraction = (row_id: string, run_id: string, i: number) => ({
        event_id: deterministicEventId(T0, 'retraction', i),
        occurred_at: (T0 + 10_000_000) / 1000,
        producer: 'passk-test/0',
        schema_version: 1,
        retraction_id: `x${i}`,
        run_id,
        ...BASE,
        agent_version: 'v2',
        row_id,
        reason: 'test',
        retracted_by: 'test',
        trials: 1,
      });
      await store.insertJsonRows(
        'retractions',
        Buffer.from(
          [retraction('r18', 'Confirm-v2', 1), retraction('r40', 'run-1', 2)].map((r) => JSON.stringify(r)).join('\n'),
        ),
      );
      // copies of one in 15 trials, in a part of their own (unmerged: FINAL would collapse them)
      await store.insertJsonRows('trials', body(trials.filter((_, i) => i % 15 === 0)), { insert_deduplicate: 0 });
      // conflicting re-sends of one in 40 others: the same event id with another verdict, output and attempt
      const resent = trials
        .filter((_, i) => i % 40 === 7)
        .map((t) => ({ ...t, passed: !t.passed, output: 'resent', attempt: t.attempt + 100 }));
      await store.insertJsonRows('trials', body(resent), { insert_deduplicate: 0 });
    }, 120_000);
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    for (const [what, opts] of OPTIONS) {
      it(`reports every version as buildReport over the stored trials (${what})`, async () => {
        const old = buildReport(
          await reportGroupsFromStore(store.client, { suites: [BASE.suite], datasetVersions: [BASE.dataset_version] }),
          opts,
        ).groups;
        const counted = await reportFromStore(store.client, BASE, opts);
        expect(old.map((g) => g.agent_version)).toEqual(['v1', 'v2', 'v3']);
        expect(old.some((g) => g.checks.length === 3 && g.stable_verdict_check_flips.length > 0)).toBe(true);
        expect(old.some((g) => g.confirmation_attempts.count > 0 && g.forbidden_trials > 0 && g.ungraded > 0)).toBe(
          true,
        );
        expect(counted).toEqual(old);
      });

      it(`compares two versions as compareVersions over the stored trials (${what})`, async () => {
        for (const [baseline, candidate] of [
          ['v1', 'v2'],
          ['v2', 'v3'],
        ] as const) {
          const scope = { ...BASE, baseline, candidate };
          const old = await compareFromStore(store.client, scope, opts);
          const counted = await comparisonFromStore(store.client, scope, opts);
          expect(old).toBeDefined();
          expect(old!.rows.baseline_only.length + old!.rows.candidate_only.length).toBeGreaterThan(0);
          expect(old!.lost_stable_correct.length).toBeGreaterThan(0);
          if (baseline === 'v1') expect(old!.confirmation.rows.some((r) => r.first_divergence !== null)).toBe(true);
          expect(counted).toEqual(old);
        }
      });
    }

    it('shares one counts answer between the overview and comparisons while the watermark stays', async () => {
      let countsQueries = 0;
      const client: Querier = {
        query: ((p: Parameters<Querier['query']>[0]) => {
          if (p.query.includes('uniqExact(cityHash64(run_id, attempt))')) countsQueries++;
          return store.client.query(p);
        }) as Querier['query'],
      };
      const mark = { value: 'w1' };
      const counts = sharedRowCounts(client, async () => mark.value);
      const [opts, other] = [OPTIONS[0]![1], OPTIONS[1]![1]];
      const report = await reportFromStore(store.client, BASE, opts);
      const pairs = [
        { ...BASE, baseline: 'v1', candidate: 'v2' },
        { ...BASE, baseline: 'v3', candidate: 'v2' },
      ];
      const compared = await Promise.all(pairs.map((s) => comparisonFromStore(store.client, s, opts)));

      expect(await reportFromStore(client, BASE, opts, counts)).toEqual(report);
      expect(countsQueries).toBe(1);
      for (const [i, s] of pairs.entries())
        expect(await comparisonFromStore(client, s, opts, counts)).toEqual(compared[i]);
      expect(await reportFromStore(client, BASE, opts, counts)).toEqual(report);
      expect(countsQueries).toBe(1);
      // other options are another question
      expect(await reportFromStore(client, BASE, other, counts)).toEqual(
        await reportFromStore(store.client, BASE, other),
      );
      expect(countsQueries).toBe(2);
      // the store moved: a comparison asks its own two versions, which a later overview does not reuse
      mark.value = 'w2';
      expect(await comparisonFromStore(client, pairs[0]!, opts, counts)).toEqual(compared[0]);
      expect(await comparisonFromStore(client, pairs[0]!, opts, counts)).toEqual(compared[0]);
      expect(countsQueries).toBe(3);
      expect(await reportFromStore(client, BASE, opts, counts)).toEqual(report);
      expect(await comparisonFromStore(client, pairs[1]!, opts, counts)).toEqual(compared[1]);
      expect(countsQueries).toBe(4);
    });

    it("says an adaptive version's first stage is assumed when no round of its run was read; the dashboard reads the rounds beside the counts (issue 32)", async () => {
      // suite `ad`: v1 a fixed run, v2 an adaptive one (`adaptive-…`), 3 attempts on each of 3 rows
      const scope = { suite: 'ad', dataset_version: 'd1' };
      const trials: TrialRecorded[] = ['v1', 'v2'].flatMap((version, v) =>
        [0, 1, 2].flatMap((row) =>
          [0, 1, 2].map((attempt) => ({
            event_id: deterministicEventId(T0, 'adaptive-stage', v * 100 + row * 10 + attempt),
            type: 'TrialRecorded' as const,
            schema_version: 1,
            occurred_at: T0 + v * 100 + row * 10 + attempt,
            producer: 'passk-test/0',
            ...scope,
            row_id: `a${row}`,
            run_id: version === 'v2' ? 'adaptive-ad-1' : 'run-ad-1',
            attempt,
            agent: { version },
            output: 'ok',
            passed: !(version === 'v2' && row === 0 && attempt === 2),
          })),
        ),
      );
      await store.insertJsonRows(
        'trials',
        Buffer.from(trials.map((t) => JSON.stringify(trialToRow(t))).join('\n') + '\n'),
      );
      const pair = { ...scope, baseline: 'v1', candidate: 'v2' };
      // the event log could not be read for the rounds: the default first stage of 2, said to be assumed
      const assumed = await comparisonFromStore(store.client, pair);
      expect(assumed?.first_stage).toEqual({ baseline: null, candidate: 2 });
      expect(assumed?.first_stage_assumed).toBe(true);
      const reported = await reportFromStore(store.client, scope);
      expect(reported.find((g) => g.agent_version === 'v2')?.first_stage).toEqual(
        expect.objectContaining({ k: 2, assumed: true }),
      );
      // the run's rounds read (--first-k 3): that first stage, stated
      const rounds = new Map([['adaptive-ad-1', 3]]);
      const read = await comparisonFromStore(store.client, pair, DEFAULT_REPORT_OPTIONS, undefined, rounds);
      expect(read?.first_stage).toEqual({ baseline: null, candidate: 3 });
      expect(read).not.toHaveProperty('first_stage_assumed');
      const v2 = (await reportFromStore(store.client, scope, DEFAULT_REPORT_OPTIONS, undefined, rounds)).find(
        (g) => g.agent_version === 'v2',
      );
      expect(v2?.first_stage?.k).toBe(3);
      expect(v2?.first_stage).not.toHaveProperty('assumed');

      // the dashboard asks the store's counts while the rounds are still being read from the event log (a cold
      // process's first read loads the log's modules and opens it), not after, and answers with the rounds read
      let release!: (r: Rounds) => void;
      const reading = new Promise<Rounds>((resolve) => (release = resolve));
      const asked: string[] = [];
      const counts: CountsSource = (s) => {
        asked.push(s.versions?.join() ?? 'all');
        return rowCounts(store.client, s);
      };
      const data = clickhouseDashboardData(
        store.client,
        async () => 'w1',
        counts,
        undefined,
        undefined,
        () => reading,
      );
      const overview = data.overview(scope);
      const comparison = data.compare(pair);
      await new Promise((resolve) => setImmediate(resolve));
      expect(asked.sort()).toEqual(['all', 'v1,v2']);
      release(rounds);
      expect(await overview).toEqual(
        await reportFromStore(store.client, scope, DEFAULT_REPORT_OPTIONS, undefined, rounds),
      );
      expect(await comparison).toMatchObject(read!);
    });

    it('has no comparison when a version has no trial in the scope', async () => {
      const scope = { ...BASE, baseline: 'v1', candidate: 'v9' };
      expect(await comparisonFromStore(store.client, scope)).toBeUndefined();
      expect(await compareFromStore(store.client, scope, DEFAULT_REPORT_OPTIONS)).toBeUndefined();
    });
  });
