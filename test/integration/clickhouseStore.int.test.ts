import { mkdtempSync, rmSync } from 'node:fs';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, DEFAULT_REPORT_OPTIONS, groupTrials } from '../../processors/core/index.ts';
import { readTrialFiles } from '../../producers/files/index.ts';
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import { fromRowStateChanged, type StreamRowState } from '../../processors/folds/rowState.ts';
import { applyRowChanges, type VersionSummaries } from '../../processors/folds/versionSummary.ts';
import type { VersionSnapshot } from '../../processors/index.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { PasskEvent, TrialRecorded } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { publicTrials } from '../helpers/fixtures.ts';
import {
  alerts,
  appliedMigrations,
  checkConsistency,
  classTransitions,
  createClickHouseRowSink,
  datasetRows,
  datasetVersions,
  failureCategories,
  gateHistory,
  judgeCalibration,
  loadTrialsForReport,
  migrate,
  MIGRATIONS,
  MigrationError,
  openClickHouse,
  passCurve,
  productionWindows,
  reportGroupsFromStore,
  rowAttempts,
  toTrialSink,
  traceRetentionDays,
  applyTraceRetention,
  traceWindows,
  versionSummary,
  type StoreClient,
  type VersionNumbers,
} from '../../sinks/clickhouse/index.ts';

/**
 * The store on chDB (one store per test file: chDB binds one data directory per process), and on a
 * ClickHouse server too when CLICKHOUSE_URL is set. Each fixture below has its expected numbers
 * worked out by hand in the comments.
 */

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
let seq = 0;
const env = <T extends string>(type: T, at: number) => ({
  event_id: deterministicEventId(at, type, seq++),
  type,
  schema_version: 1,
  occurred_at: at,
  producer: 'passk-test/0',
});

type V = boolean | null;
const trial = (
  version: string,
  row: string,
  attempt: number,
  passed: V,
  extra: Partial<TrialRecorded> = {},
): TrialRecorded => ({
  ...env('TrialRecorded', (version === 'base' ? T0 : T0 + DAY) + attempt * 1000),
  suite: 's',
  dataset_version: 'd1',
  row_id: row,
  run_id: `${version}-run`,
  attempt,
  agent: { version },
  passed,
  ...extra,
});

/**
 * base: r1 TTT (stable_correct), r2 TFT (flip), r3 FFF (stable_wrong), r4 TTT (stable_correct, must_not_break)
 * cand: r1 TTT (sc), r2 TTT (sc), r3 FFT + one ungraded attempt (flip), r4 TFT (flip)
 */
const verdicts: Record<string, Record<string, V[]>> = {
  base: { r1: [true, true, true], r2: [true, false, true], r3: [false, false, false], r4: [true, true, true] },
  cand: { r1: [true, true, true], r2: [true, true, true], r3: [false, false, true, null], r4: [true, false, true] },
};
const categories: Record<string, string | null> = {
  'base/r2/1': 'wrong_tool',
  'base/r3/0': 'bad_arguments',
  'base/r3/1': 'bad_arguments',
  'cand/r3/0': 'retrieval_miss',
  'cand/r3/1': 'retrieval_miss',
  'cand/r3/3': 'test_environment',
  'cand/r4/1': 'policy_violation',
};
const fixtureTrials: TrialRecorded[] = Object.entries(verdicts).flatMap(([version, rows]) =>
  Object.entries(rows).flatMap(([row, vs]) =>
    vs.map((passed, attempt) =>
      trial(version, row, attempt, passed, {
        ...(row === 'r4'
          ? { tags: ['must_not_break'], checks: [{ name: 'refund_ok', answer: passed === true, passed: true }] }
          : {}),
        ...(categories[`${version}/${row}/${attempt}`]
          ? { failure_category: categories[`${version}/${row}/${attempt}`] as never }
          : {}),
        ...(passed === null ? { error_message: 'the agent exited with code 2 without a result: boom' } : {}),
        output: `out-${row}-${attempt}`,
      }),
    ),
  ),
);

const dir = mkdtempSync(join(tmpdir(), 'passk-store-'));
const targets = storeTargets(dir, 'passk_store_test').map((c) => ({ ...c, open: () => openClickHouse(c.target) }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const c of targets)
  describe.skipIf(c.skip !== undefined)(onStore('store on', c), () => {
    const { open } = c;
    let store: StoreClient;
    const write = async (events: readonly PasskEvent[]) => {
      const sink = createClickHouseRowSink({
        client: store.client,
        retry: { retries: 0, initialMs: 0, factor: 1, maxMs: 0 },
      });
      await sink.writeEvents(events);
      await sink.close();
    };

    beforeAll(async () => {
      store = await open();
      await migrate(store.client);
      await write(fixtureTrials);
    });
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    it('applies migrations once: a second run applies nothing and changes no table', async () => {
      const tables = async () =>
        (await (
          await store.client.query({
            query:
              'SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase() ORDER BY name',
            format: 'JSONEachRow',
          })
        ).json()) as unknown[];
      const before = await tables();
      const latest = Math.max(...MIGRATIONS.map((m) => m.version));
      expect(await migrate(store.client)).toEqual({ applied: [], current: latest });
      expect(await tables()).toEqual(before);
      expect((await appliedMigrations(store.client)).map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
      // An applied migration whose statements changed is refused, not re-run.
      const edited = [{ ...MIGRATIONS[0]!, up: () => ['SELECT 1'] }];
      await expect(migrate(store.client, { migrations: edited })).rejects.toBeInstanceOf(MigrationError);
    });

    it("keeps an ungraded trial's error message (migration 10), and a trial without one reads back without one", async () => {
      const trials = await loadTrialsForReport(store.client, { suites: ['s'], agentVersions: ['cand'] });
      expect(
        trials.filter((t) => t.error_message !== undefined).map((t) => [t.row_id, t.attempt, t.error_message]),
      ).toEqual([['r3', 3, 'the agent exited with code 2 without a result: boom']]);
    });

    it('sets and removes the trace retention', async () => {
      await applyTraceRetention(store.client, 30);
      expect(await traceRetentionDays(store.client)).toBe(30);
      await applyTraceRetention(store.client, 30);
      expect(await traceRetentionDays(store.client)).toBe(30);
      await applyTraceRetention(store.client, 0);
      expect(await traceRetentionDays(store.client)).toBe(0);
    });

    it('per-version summary: the report numbers from the (n, c) histogram', async () => {
      // base: c = 3, 2, 0, 3 of n = 3 each. trials 12, passes 8 → mean accuracy 8/12.
      // pass^1 = (1 + 2/3 + 0 + 1)/4 = 2/3; pass^2 = (1 + C(2,2)/C(3,2) + 0 + 1)/4 = (2 + 1/3)/4 = 7/12; pass^3 = 2/4.
      // pass@2 = 1 − C(n−c,2)/C(3,2): 1, 1, 0, 1 → 3/4; classes sc 2, flip 1, sw 1 → flip rate 1/4.
      const s = await versionSummary(store.client, { suite: 's', agent_version: 'base' });
      expect(s.bins).toEqual([
        { n: 3, c: 0, count: 1 },
        { n: 3, c: 2, count: 1 },
        { n: 3, c: 3, count: 2 },
      ]);
      expect([s.rows, s.trials, s.ungraded, s.k_max]).toEqual([4, 12, 0, 3]);
      expect(s.mean_accuracy).toBeCloseTo(8 / 12, 12);
      expect(s.pass_hat_k['1']).toBeCloseTo(2 / 3, 12);
      expect(s.pass_hat_k['2']).toBeCloseTo(7 / 12, 12);
      expect(s.pass_hat_k['3']).toBeCloseTo(0.5, 12);
      expect(s.pass_at_k['2']).toBeCloseTo(0.75, 12);
      expect(s.classes).toEqual({ stable_correct: 2, stable_wrong: 1, flip: 1, unclassified: 0 });
      expect(s.flip_rate).toBe(0.25);
      expect(s.intervals.flip_rate![0]).toBeLessThan(0.25);
      expect(s.intervals.flip_rate![1]).toBeGreaterThan(0.25);
      // cand: r3 has an ungraded attempt, left out of n: c = 3, 3, 1, 2 of n = 3; ungraded 1. Its bin's rows were
      // given 4 attempts (recorded); K stays 3, the attempts the other rows were given.
      const c = await versionSummary(store.client, { suite: 's', agent_version: 'cand' });
      expect(c.bins).toEqual([
        { n: 3, c: 1, count: 1, recorded: 4 },
        { n: 3, c: 2, count: 1 },
        { n: 3, c: 3, count: 2 },
      ]);
      expect([c.trials, c.ungraded, c.mean_accuracy, c.k_max]).toEqual([12, 1, 0.75, 3]);
      // Counted as a failure instead, r3 has n = 4, c = 1.
      const f = await versionSummary(store.client, { suite: 's', agent_version: 'cand', ungradedAsFailure: true });
      expect(f.bins).toEqual([
        { n: 3, c: 2, count: 1 },
        { n: 3, c: 3, count: 2 },
        { n: 4, c: 1, count: 1 },
      ]);
    });

    it('pass^k curve k = 1..K', async () => {
      // cand: pass^1 = (1 + 1 + 1/3 + 2/3)/4 = 3/4; pass^2 = (1 + 1 + 0 + 1/3)/4 = 7/12; pass^3 = (1 + 1 + 0 + 0)/4 = 1/2.
      const curve = await passCurve(store.client, { suite: 's', agent_version: 'cand' });
      expect(curve.map((p) => p.k)).toEqual([1, 2, 3]);
      expect(curve.map((p) => p.rows)).toEqual([4, 4, 4]);
      [3 / 4, 7 / 12, 1 / 2].forEach((v, i) => expect(curve[i]!.pass_hat_k).toBeCloseTo(v, 12));
    });

    it('class transitions, regression lists and the drill-down to attempts and checks', async () => {
      // r1 sc→sc, r2 flip→sc, r3 sw→flip, r4 sc→flip (must_not_break): r4 is the regression, r2 the improvement.
      const t = await classTransitions(store.client, {
        suite: 's',
        dataset_version: 'd1',
        baseline: 'base',
        candidate: 'cand',
      });
      expect(t.matrix.stable_correct).toEqual({ stable_correct: 1, stable_wrong: 0, flip: 1, unclassified: 0 });
      expect(t.matrix.flip).toEqual({ stable_correct: 1, stable_wrong: 0, flip: 0, unclassified: 0 });
      expect(t.matrix.stable_wrong).toEqual({ stable_correct: 0, stable_wrong: 0, flip: 1, unclassified: 0 });
      expect(t.regressions).toEqual([
        {
          row_id: 'r4',
          must_not_break: true,
          baseline: { n: 3, c: 3, class: 'stable_correct' },
          candidate: { n: 3, c: 2, class: 'flip' },
        },
      ]);
      expect(t.improvements.map((r) => r.row_id)).toEqual(['r2']);
      // only the must-not-break rows (what /api/compare lists): r4 alone, with the same transition
      const marked = await classTransitions(store.client, {
        suite: 's',
        dataset_version: 'd1',
        baseline: 'base',
        candidate: 'cand',
        mustNotBreakOnly: true,
      });
      expect(marked.rows).toEqual(t.rows.filter((r) => r.must_not_break));
      expect(marked.rows.map((r) => r.row_id)).toEqual(['r4']);
      expect(marked.regressions).toEqual(t.regressions);
      const attempts = await rowAttempts(store.client, {
        suite: 's',
        dataset_version: 'd1',
        row_id: 'r4',
        versions: ['base', 'cand'],
      });
      expect(attempts.map((a) => [a.agent_version, a.attempt, a.passed])).toEqual([
        ['base', 0, true],
        ['base', 1, true],
        ['base', 2, true],
        ['cand', 0, true],
        ['cand', 1, false],
        ['cand', 2, true],
      ]);
      expect(attempts[4]!.checks).toEqual([{ name: 'refund_ok', answer: false, passed: true }]);
      expect(attempts[4]!.failure_category).toBe('policy_violation');
    });

    it('failure categories over time', async () => {
      // Day 1 (base): bad_arguments ×2 (r3), uncategorized ×1 (r3 attempt 2), wrong_tool ×1 (r2).
      // Day 2 (cand): policy_violation ×1 (r4), retrieval_miss ×2 (r3), test_environment ×1 (the ungraded r3 attempt).
      const rows = await failureCategories(store.client, { suite: 's', bucketMs: DAY });
      expect(rows.map((r) => [r.bucket_start - T0, r.agent_version, r.failure_category, r.trials, r.rows])).toEqual([
        [0, 'base', 'bad_arguments', 2, 1],
        [0, 'base', 'uncategorized', 1, 1],
        [0, 'base', 'wrong_tool', 1, 1],
        [DAY, 'cand', 'policy_violation', 1, 1],
        [DAY, 'cand', 'retrieval_miss', 2, 1],
        [DAY, 'cand', 'test_environment', 1, 1],
      ]);
    });

    it('gate history: newest first, failed rules, and the verdict count per candidate', async () => {
      const gate = (at: number, verdict: 'pass' | 'fail', repeated?: boolean): PasskEvent => ({
        ...env('GateEvaluated', at),
        gate_id: `g-${at}`,
        suite: 's',
        dataset_version: 'd1',
        baseline: 'base',
        candidate: 'cand',
        verdict,
        reasons: [
          {
            rule: 'must_not_break',
            passed: verdict === 'pass',
            detail: 'r4',
            ...(verdict === 'fail' ? { rows: ['r4'] } : {}),
          },
          { rule: 'pass_hat_k', passed: true, detail: 'ok' },
        ],
        evidence: [{ row_id: 'r4', baseline_attempts: ['a'], candidate_attempts: ['b', 'c'] }],
        ...(repeated === undefined ? {} : { repeated_verdict: repeated }),
      });
      const first = gate(T0 + 2 * DAY, 'fail');
      const second = gate(T0 + 3 * DAY, 'pass', true);
      await write([first, second, first]); // a redelivered decision is stored once
      const h = await gateHistory(store.client, { suite: 's', candidate: 'cand' });
      expect(
        h.map((g) => [g.event_id, g.verdict, g.failed_rules, g.verdict_number, g.repeated_verdict, g.evidence_rows]),
      ).toEqual([
        [second.event_id, 'pass', [], 2, true, 1],
        [first.event_id, 'fail', ['must_not_break'], 1, false, 1],
      ]);
      expect(h[1]!.reasons[0]).toEqual({
        rule: 'must_not_break',
        passed: false,
        detail: 'r4',
        rows: ['r4'],
        has_rows: true,
      });
    });

    it('production windows (latest seq wins), alerts in range, and weighted pass rate from traces', async () => {
      const sink = createClickHouseRowSink({ client: store.client });
      const w = (start: number, s: number, rate: number) => ({
        agent_version: 'cand',
        segment: 'all',
        grader: 'g',
        window_start: `${start / 1000}.000`,
        window_end: `${(start + 3_600_000) / 1000}.000`,
        sampled: 10,
        ungraded: 0,
        weight: 10,
        passed_weight: 10 * rate,
        pass_rate: rate,
        ci_low: rate - 0.1,
        ci_high: rate + 0.1,
        seq: s,
      });
      await sink.write('production_windows', [w(T0, 1, 0.5), w(T0, 2, 0.6), w(T0 + 3_600_000, 1, 0.9)]);
      const alert = (id: string, at: number) => ({
        alert_id: id,
        raised_at: `${at / 1000}.000`,
        agent_version: 'cand',
        segment: 'all',
        kind: 'pass_rate_drop',
        severity: 'page',
        message: `drop ${id}`,
        window_start: `${T0 / 1000}.000`,
        value: 0.6,
        threshold: 0.8,
      });
      await sink.write('alerts', [alert('a1', T0 + 1000), alert('a2', T0 + 2000), alert('a3', T0 + 10 * DAY)]);
      await sink.close();
      const ws = await productionWindows(store.client, { from: T0, to: T0 + DAY, agent_version: 'cand' });
      expect(ws.map((x) => [x.window_start - T0, x.pass_rate])).toEqual([
        [0, 0.6],
        [3_600_000, 0.9],
      ]);
      const as = await alerts(store.client, { from: T0, to: T0 + DAY });
      expect(as.map((a) => [a.alert_id, a.window_start, a.threshold])).toEqual([
        ['a2', T0, 0.8],
        ['a1', T0, 0.8],
      ]);

      // Traces in hour 0: passed with p = 1, failed with p = 0.5, passed with p = 0.25, and one without grader g.
      // weight = 1 + 2 + 4 = 7, passed weight = 1 + 4 = 5 → 5/7; 4 sampled, 3 graded.
      const trace = (i: number, p: number, passed: boolean | null): PasskEvent => ({
        ...env('TraceSampled', T0 + i * 1000),
        trace_id: `t${i}`,
        agent_version: 'cand',
        segment: 'all',
        input_fingerprint: `f${i}`,
        sampling: { policy: 'uniform', probability: p },
        verdicts: passed === null ? [{ grader: 'other', passed: true }] : [{ grader: 'g', passed }],
        user_signals: { thumbs: 'up', stars: 4 },
      });
      await write([trace(1, 1, true), trace(2, 0.5, false), trace(3, 0.25, true), trace(4, 1, null)]);
      const tw = await traceWindows(store.client, { from: T0, to: T0 + DAY, windowMs: 3_600_000, grader: 'g' });
      expect(tw).toHaveLength(1);
      expect([tw[0]!.sampled, tw[0]!.graded, tw[0]!.weight, tw[0]!.passed_weight]).toEqual([4, 3, 7, 5]);
      expect(tw[0]!.pass_rate).toBeCloseTo(5 / 7, 12);
    });

    it('judge calibration table (by the core, over stored judgments and labels)', async () => {
      // judge J on i1..i4: pass, pass, fail, pass; humans: pass, fail, fail, pass → agreed 3 of 4.
      // kappa: po = 3/4; humans pass 2 fail 2, judge pass 3 fail 1 → pe = (2·3 + 2·1)/16 = 1/2 → (3/4 − 1/2)/(1/2) = 1/2.
      const judge = ['pass', 'pass', 'fail', 'pass'];
      const human = ['pass', 'fail', 'fail', 'pass'];
      await write([
        ...judge.map((label, i): PasskEvent => ({
          ...env('JudgmentRecorded', T0 + i),
          item_id: `i${i + 1}`,
          judge: { id: 'J', version: '1' },
          rubric_version: 'r1',
          kind: 'pointwise',
          label,
        })),
        ...human.map((label, i): PasskEvent => ({
          ...env('LabelRecorded', T0 + i),
          item_id: `i${i + 1}`,
          labeler: 'ann',
          label,
        })),
      ]);
      const [cal, ...rest] = await judgeCalibration(store.client, { judge_id: 'J' });
      expect(rest).toEqual([]);
      expect(cal!.judge).toEqual({ id: 'J', version: '1', rubric_version: 'r1' });
      expect([cal!.items, cal!.human.items, cal!.agreement.agreed, cal!.agreement.agreement]).toEqual([4, 4, 3, 0.75]);
      expect(cal!.agreement.kappa).toBeCloseTo(0.5, 12);
    });

    it('dataset versions with must-not-break rows and provenance', async () => {
      // v1: a (no tags), b (must_not_break). v2: c (must_not_break, from a confirmed production failure), a re-tagged must_not_break.
      // v1 → changed 2, rows 2, mnb 1; v2 → changed 2, rows 3 (a, b, c), mnb 3, from production 1.
      const up = (
        at: number,
        version: string,
        row: string,
        tags: string[],
        provenance: { kind: 'manual' | 'production_failure'; trace_id?: string },
      ): PasskEvent => ({
        ...env('DatasetRowUpserted', at),
        dataset_id: 'ds',
        dataset_version: version,
        row_id: row,
        input: `in-${row}`,
        expected: `exp-${row}-${version}`,
        tags,
        provenance,
      });
      const events = [
        up(T0, 'v1', 'a', [], { kind: 'manual' }),
        up(T0 + 1, 'v1', 'b', ['must_not_break'], { kind: 'manual' }),
        up(T0 + DAY, 'v2', 'c', ['must_not_break'], { kind: 'production_failure', trace_id: 't9' }),
        up(T0 + DAY + 1, 'v2', 'a', ['must_not_break'], { kind: 'manual' }),
      ];
      await write([...events, events[0]!]);
      const vs = await datasetVersions(store.client, { dataset_id: 'ds' });
      expect(
        vs.map((v) => [
          v.dataset_version,
          v.first_at - T0,
          v.changed_rows,
          v.rows,
          v.must_not_break_rows,
          v.from_production,
        ]),
      ).toEqual([
        ['v1', 0, 2, 2, 1, 0],
        ['v2', DAY, 2, 3, 3, 1],
      ]);
      const mnb = await datasetRows(store.client, { dataset_id: 'ds', dataset_version: 'v2', mustNotBreakOnly: true });
      expect(mnb.map((r) => [r.row_id, r.changed_in, r.expected, r.provenance.kind, r.provenance.trace_id])).toEqual([
        ['a', 'v2', 'exp-a-v2', 'manual', null],
        ['b', 'v1', 'exp-b-v1', 'manual', null],
        ['c', 'v2', 'exp-c-v2', 'production_failure', 't9'],
      ]);
      const v1 = await datasetRows(store.client, { dataset_id: 'ds', dataset_version: 'v1' });
      expect(v1.map((r) => [r.row_id, r.must_not_break, r.tags])).toEqual([
        ['a', false, []],
        ['b', true, ['must_not_break']],
      ]);
    });

    it('writing the same batch twice leaves every query result unchanged', async () => {
      const snapshot = async () => ({
        summary: await versionSummary(store.client, { suite: 's', agent_version: 'base' }),
        transitions: await classTransitions(store.client, {
          suite: 's',
          dataset_version: 'd1',
          baseline: 'base',
          candidate: 'cand',
        }),
        trials: await loadTrialsForReport(store.client, { suites: ['s'] }),
        failures: await failureCategories(store.client, { suite: 's', bucketMs: DAY }),
      });
      const before = await snapshot();
      await write(fixtureTrials);
      await write([...fixtureTrials].reverse());
      expect(await snapshot()).toEqual(before);
      expect(before.trials).toHaveLength(fixtureTrials.length);
    });

    it("a plain insert after the sink's is not taken for a duplicate of it (no insert_deduplication_token carries over)", async () => {
      await store.client.command({
        query:
          'CREATE TABLE IF NOT EXISTS token_probe (k UInt32) ENGINE = MergeTree ORDER BY k ' +
          'SETTINGS non_replicated_deduplication_window = 100',
      });
      await store.insertJsonRows('token_probe', Buffer.from('{"k":1}\n'), { insert_deduplication_token: 'probe-1' });
      await store.client.insert({ table: 'token_probe', values: [{ k: 2 }], format: 'JSONEachRow' });
      await store.client.insert({ table: 'token_probe', values: [{ k: 3 }], format: 'JSONEachRow' });
      const rs = await store.client.query({ query: 'SELECT k FROM token_probe ORDER BY k', format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([{ k: 1 }, { k: 2 }, { k: 3 }]);
      await store.client.command({ query: 'DROP TABLE token_probe' });
    });

    it('stored trials read back as the events written', async () => {
      const back = await loadTrialsForReport(store.client, { suites: ['s'] });
      const byId = new Map(fixtureTrials.map((t) => [t.event_id, t]));
      for (const t of back) expect(t).toEqual(byId.get(t.event_id));
    });

    it('τ-bench through the writer: the pass^k curve and the report equal the published table and `report FILE`', async () => {
      const file = publicTrials('tau_bench.jsonl');
      const { trials } = await readTrialFiles([file]);
      await write(trials);
      const round = (xs: (number | null)[]) => xs.map((x) => (x === null ? null : Math.round(x * 1000) / 1000));
      const airline = await passCurve(store.client, { suite: 'airline', agent_version: 'gpt-4o' });
      const retail = await passCurve(store.client, { suite: 'retail', agent_version: 'gpt-4o' });
      expect(round(airline.map((p) => p.pass_hat_k))).toEqual([0.42, 0.273, 0.22, 0.2]);
      expect(round(retail.map((p) => p.pass_hat_k))).toEqual([0.604, 0.491, 0.43, 0.383]);
      const fromStore = buildReport(
        await reportGroupsFromStore(store.client, { suites: ['airline', 'retail'] }),
        DEFAULT_REPORT_OPTIONS,
      );
      expect(fromStore).toEqual(buildReport(groupTrials(trials), DEFAULT_REPORT_OPTIONS));
    });

    it('consistency invariant: raw trials, row state and version summaries agree after a random mix with duplicates and out-of-order attempts', async () => {
      // A small PRNG (mulberry32) keeps the case reproducible.
      let x = 20260101;
      const rnd = () => ((x = (x + 0x6d2b79f5) | 0), (((x ^ (x >>> 15)) * (1 | x)) >>> 0) / 2 ** 32);
      const mixed: TrialRecorded[] = [];
      for (const version of ['m1', 'm2'])
        for (let r = 0; r < 30; r++)
          for (let a = 0, n = 1 + Math.floor(rnd() * 5); a < n; a++) {
            const u = rnd();
            mixed.push({
              ...trial(version, `row-${r}`, a, u < 0.1 ? null : u < 0.6),
              suite: 'mix',
              occurred_at: T0 + Math.floor(rnd() * DAY),
            });
          }
      // An Inspect log with epochs: 3 and one unscored epoch (row-1's third): every row was given 3 attempts.
      const epochs = ['+++', '++?', '+-+'].flatMap((marks, r) =>
        [...marks].map((m, a) => ({
          ...trial('epochs', `row-${r}`, a, m === '?' ? null : m === '+'),
          suite: 'mix',
          occurred_at: T0 + a * 1000,
        })),
      );
      mixed.push(...epochs);
      const withDuplicates = [...mixed, ...mixed.filter(() => rnd() < 0.3)].sort(() => rnd() - 0.5);
      const sink = createClickHouseRowSink({ client: store.client, maxRows: 17, maxWaitMs: 5 });
      for (let i = 0; i < withDuplicates.length; i += 23) await sink.writeEvents(withDuplicates.slice(i, i + 23));
      // The reference fold (the processors come later): one state per row, seq = events folded so far;
      // every intermediate state is emitted, out of order, and the highest seq must win.
      // Version snapshots as the trial topology takes them: rows spread over 3 trial partitions, one
      // snapshot per (version, partition) a unit of 23 events touched, at the partition's offset.
      const states: PasskEvent[] = [];
      const snapshots: VersionSnapshot[] = [];
      const byRow = new Map<string, TrialRecorded[]>();
      const current = new Map<string, StreamRowState>();
      const partitions = [new Map(), new Map(), new Map()] as VersionSummaries[];
      const offsets = [0, 0, 0];
      const partitionOfRow = (rowId: string) => Number(rowId.slice('row-'.length)) % 3;
      for (let i = 0; i < withDuplicates.length; i += 23) {
        const touched = new Set<number>();
        for (const t of withDuplicates.slice(i, i + 23)) {
          const key = `${t.agent.version}/${t.row_id}`;
          const seen = byRow.get(key) ?? [];
          if (!seen.some((s) => s.event_id === t.event_id)) seen.push(t);
          byRow.set(key, seen);
          const change: RowStateChanged = {
            ...env('RowStateChanged', T0),
            suite: 'mix',
            dataset_version: 'd1',
            agent_version: t.agent.version,
            row_id: t.row_id,
            seq: seen.length,
            n: seen.filter((s) => s.passed !== null).length,
            c: seen.filter((s) => s.passed === true).length,
            ungraded: seen.filter((s) => s.passed === null).length,
            class: 'unclassified',
            attempt_records: seen.map(toAttemptRecord),
          };
          states.push(change);
          const p = partitionOfRow(t.row_id);
          const after = fromRowStateChanged(change);
          applyRowChanges(partitions[p]!, [{ before: current.get(key), after }]);
          current.set(key, after);
          offsets[p]!++;
          touched.add(p);
        }
        for (const p of touched)
          for (const summary of partitions[p]!.values())
            snapshots.push({ partition: p, nextOffset: offsets[p]!, summary: structuredClone(summary) });
      }
      await sink.writeEvents(states.sort(() => rnd() - 0.5));
      // Out of order, with every third snapshot written twice: the highest offset per partition must win.
      await toTrialSink(sink).writeTrials({
        trials: [],
        rowStates: [],
        finished: [],
        summaries: [...snapshots, ...snapshots.filter((_, i) => i % 3 === 0)].sort(() => rnd() - 0.5),
      });
      await sink.close();
      const report = await checkConsistency(store.client, { suite: 'mix' });
      expect(report.differences).toEqual([]);
      expect(report.versions).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.rows).toBe(63);
      // Rows with graded attempts + rows with only ungraded ones = the 30 rows of each version.
      const rowsOf = (x: VersionNumbers | null | undefined) =>
        x && 'rows' in x ? x.rows + x.rows_without_graded : null;
      expect(report.checked.map((v) => [v.agent_version, rowsOf(v.from_trials), rowsOf(v.from_summaries)])).toEqual([
        ['epochs', 3, 3],
        ['m1', 30, 30],
        ['m2', 30, 30],
      ]);
      // So the summary may read the row state (one row per row) or the snapshots instead of every trial: same numbers.
      for (const agent_version of ['m1', 'm2', 'epochs']) {
        for (const ungradedAsFailure of [false, true]) {
          const scope = { suite: 'mix', agent_version, ungradedAsFailure };
          const fromState = await versionSummary(store.client, { ...scope, from: 'row_state' });
          expect(fromState.bins.length).toBeGreaterThan(1);
          expect(fromState).toEqual(await versionSummary(store.client, scope));
        }
        const scope = { suite: 'mix', agent_version };
        expect(await versionSummary(store.client, { ...scope, from: 'summaries' })).toEqual(
          await versionSummary(store.client, scope),
        );
      }

      // The unscored epoch: K is the 3 attempts every row was given (as `passk report` from the file says), pass^3
      // over the 2 rows with 3 graded, from every source; the fewest graded (2) was the summaries' K before.
      const fromFile = buildReport(groupTrials(epochs), DEFAULT_REPORT_OPTIONS).groups[0]!;
      expect([fromFile.k_max, fromFile.rows_at_k]).toEqual([3, { '1': 3, '2': 3, '3': 2 }]);
      for (const from of ['trials', 'row_state', 'summaries'] as const) {
        const s = await versionSummary(store.client, { suite: 'mix', agent_version: 'epochs', from });
        expect([s.k_max, s.rows_at_k, s.pass_hat_k, s.pass_at_k]).toEqual([
          fromFile.k_max,
          fromFile.rows_at_k,
          fromFile.pass_hat_k,
          fromFile.pass_at_k,
        ]);
        const curve = await passCurve(store.client, { suite: 'mix', agent_version: 'epochs', from });
        expect(curve.map((p) => [p.k, p.rows, p.pass_hat_k])).toEqual([
          [1, 3, fromFile.pass_hat_k['1']],
          [2, 3, fromFile.pass_hat_k['2']],
          [3, 2, 0.5],
        ]);
      }

      // A state that disagrees with the trials is reported, with both sides.
      const wrong = states
        .filter((s) => s.type === 'RowStateChanged' && s.row_id === 'row-0' && s.agent_version === 'm1')
        .reduce((a, b) => (a.type === 'RowStateChanged' && b.type === 'RowStateChanged' && b.seq > a.seq ? b : a));
      if (wrong.type !== 'RowStateChanged') throw new Error('unreachable');
      const badC = wrong.c === wrong.n ? wrong.c - 1 : wrong.c + 1;
      await write([{ ...wrong, event_id: deterministicEventId(T0, 'wrong'), seq: 999, c: badC }]);
      const broken = await checkConsistency(store.client, { suite: 'mix' });
      expect(broken.ok).toBe(false);
      expect(broken.differences.map((d) => [d.agent_version, d.row_id, d.trials_c, d.state_c])).toEqual([
        ['m1', 'row-0', wrong.c, badC],
      ]);
      expect(broken.versions.map((v) => v.agent_version)).toEqual(['m1']);

      // A snapshot that lost a row (a newer offset of m2's partition 1) is reported too, trials and row state agreeing.
      const latest = snapshots.filter((x) => x.partition === 1 && x.summary.agent_version === 'm2').at(-1)!;
      const [bin, count] = Object.entries(latest.summary.histogram)[0] as [string, number];
      const [n, c] = bin.split(',').map(Number) as [number, number];
      const lost = {
        ...latest.summary,
        rows: latest.summary.rows - 1,
        trials: latest.summary.trials - n,
        passes: latest.summary.passes - c,
        histogram: { ...latest.summary.histogram, [bin]: count - 1 },
      };
      const sink2 = createClickHouseRowSink({ client: store.client });
      await toTrialSink(sink2).writeTrials({
        trials: [],
        rowStates: [],
        finished: [],
        summaries: [{ partition: 1, nextOffset: latest.nextOffset + 1, summary: lost }],
      });
      await sink2.close();
      const m2 = (await checkConsistency(store.client, { suite: 'mix' })).versions.find(
        (v) => v.agent_version === 'm2',
      )!;
      expect(m2.from_trials).toEqual(m2.from_row_state);
      expect(rowsOf(m2.from_summaries)).toBe(29);
      // Without the summaries only the row-state difference remains.
      expect(
        (await checkConsistency(store.client, { suite: 'mix', summaries: false })).versions.map((v) => v.agent_version),
      ).toEqual(['m1']);
    });
    it('splits a batch the store refuses, writes every good row and dead-letters the bad one with the reason', async () => {
      const sink = createClickHouseRowSink({
        client: store.client,
        insertJsonRows: store.insertJsonRows,
        retry: { retries: 0, initialMs: 0, factor: 1, maxMs: 0 },
      });
      const good = Array.from({ length: 7 }, (_, i) => ({
        agent_version: 'dl',
        segment: `s${i}`,
        grader: 'g',
        window_start: '1767225600.000',
        window_end: '1767229200.000',
        sampled: i,
        ungraded: 0,
        weight: 1,
        passed_weight: 1,
        pass_rate: 1,
        ci_low: 0,
        ci_high: 1,
        seq: 1,
      }));
      const bad = { ...good[0]!, segment: 'bad', sampled: 'not a number' };
      await sink.write('production_windows', [...good.slice(0, 3), bad, ...good.slice(3)]);
      await sink.close();
      const stored = await (
        await store.client.query({
          query: "SELECT segment FROM production_windows_v2 FINAL WHERE agent_version = 'dl' ORDER BY segment",
          format: 'JSONEachRow',
        })
      ).json<{ segment: string }>();
      expect(stored.map((r) => r.segment)).toEqual(good.map((g) => g.segment));
      const letters = await (
        await store.client.query({
          query: "SELECT target_table, value_base64, reason FROM dead_letters FINAL WHERE stage = 'sink'",
          format: 'JSONEachRow',
        })
      ).json<{ target_table: string; value_base64: string; reason: string }>();
      expect(letters).toHaveLength(1);
      expect(letters[0]!.target_table).toBe('production_windows');
      expect(JSON.parse(Buffer.from(letters[0]!.value_base64, 'base64').toString())).toMatchObject({
        segment: 'bad',
        sampled: 'not a number',
      });
      expect(letters[0]!.reason).toMatch(/CANNOT_PARSE|INCORRECT_DATA|TYPE_MISMATCH/);
    });
  });
