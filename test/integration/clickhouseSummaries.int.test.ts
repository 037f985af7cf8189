import { onStore, storeTargets } from '../helpers/storeTargets.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import { fromRowStateChanged, toRowStateChanged, type StreamRowState } from '../../processors/folds/rowState.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { applyRowChanges, type VersionSummaries } from '../../processors/folds/versionSummary.ts';
import type { VersionSnapshot } from '../../processors/index.ts';
import { InputError } from '../../schemas/errors.ts';
import {
  appliedMigrations,
  checkConsistency,
  createClickHouseRowSink,
  migrate,
  MIGRATIONS,
  NEW_STORE_TABLES,
  openClickHouse,
  passCurve,
  productionWindows,
  toTrialSink,
  versionSummary,
  type StoreClient,
} from '../../sinks/clickhouse/index.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';

/**
 * `version_summaries` (the processors' per-partition snapshots) and the re-keyed production windows,
 * on chDB (and on a server when CLICKHOUSE_URL is set). Expected numbers are worked out by hand in
 * the comments. Snapshots are built with the processors' own `applyRowChanges`.
 */

const dir = mkdtempSync(join(tmpdir(), 'passk-summaries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const targets = storeTargets(dir, 'passk_summaries_test').map((c) => ({ ...c, open: () => openClickHouse(c.target) }));

/** A row state with only what the summaries read (class: the processors' default minAttempts 3). */
const state = (dataset_version: string, row_id: string, n: number, c: number, ungraded = 0): StreamRowState => ({
  suite: 's',
  dataset_version,
  agent_version: 'v',
  row_id,
  seq: n + ungraded,
  occurred_at: 0,
  n,
  c,
  ungraded,
  class: n < 3 ? 'unclassified' : c === n ? 'stable_correct' : c === 0 ? 'stable_wrong' : 'flip',
  attempts: [],
  tags: [],
});

/** Folds row changes into a partition's summaries and snapshots every version it holds at `nextOffset`. */
const snapshotsAfter = (
  sums: VersionSummaries,
  partition: number,
  nextOffset: number,
  changes: { before?: StreamRowState; after: StreamRowState }[],
): VersionSnapshot[] => {
  applyRowChanges(
    sums,
    changes.map(({ before, after }) => ({ before, after })),
  );
  return [...sums.values()].map((summary) => ({ partition, nextOffset, summary: structuredClone(summary) }));
};

for (const c of targets)
  describe.skipIf(c.skip !== undefined)(onStore('version summaries and production windows on', c), () => {
    const { open } = c;
    let store: StoreClient;
    const writeSnapshots = async (summaries: VersionSnapshot[]) => {
      const sink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows });
      await toTrialSink(sink).writeTrials({ trials: [], rowStates: [], finished: [], summaries });
      await sink.close();
    };

    // Partition 0 holds r1 (TTT) and r2 (TFT); partition 1 holds r3 (FFF + one ungraded) and r4, which
    // grows from one pass (1, 1) to TFT (3, 2) in a later unit.
    const p0: VersionSummaries = new Map();
    const p1: VersionSummaries = new Map();
    const unitA = snapshotsAfter(p0, 0, 10, [{ after: state('d1', 'r1', 3, 3) }, { after: state('d1', 'r2', 3, 2) }]);
    const unitB = snapshotsAfter(p1, 1, 7, [{ after: state('d1', 'r3', 3, 0, 1) }, { after: state('d1', 'r4', 1, 1) }]);
    const unitC = snapshotsAfter(p1, 1, 12, [{ before: state('d1', 'r4', 1, 1), after: state('d1', 'r4', 3, 2) }]);
    // Another dataset version of the same agent version, in partition 0: one row TTT.
    const unitD = snapshotsAfter(p0, 0, 15, [{ after: state('d2', 'r1', 3, 3) }]);

    beforeAll(async () => {
      store = await open();
      await migrate(store.client);
    });
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    it('sums the latest snapshot of each partition: the report numbers, worked out by hand', async () => {
      await writeSnapshots([...unitA, ...unitB]);
      await writeSnapshots([...unitC, ...unitD]);
      // d1, latest per partition: p0@15 {3,3: 1, 3,2: 1}, p1@12 {3,0: 1, 3,2: 1} → bins (3,0)×1, (3,2)×2, (3,3)×1.
      // trials 12, passes 0 + 2 + 2 + 3 = 7 → mean accuracy 7/12; ungraded 1 (r3).
      // pass^1 = (0 + 2/3 + 2/3 + 1)/4 = 7/12; pass^2 = (0 + 1/3 + 1/3 + 1)/4 = 5/12; pass^3 = 1/4.
      // pass@2 = 1 − C(n−c, 2)/C(3, 2): 0, 1, 1, 1 → 3/4. Classes: sw 1, flip 2, sc 1 → flip rate 1/2.
      const s = await versionSummary(store.client, {
        suite: 's',
        agent_version: 'v',
        dataset_version: 'd1',
        from: 'summaries',
      });
      // r3 alone in (3,0), with one ungraded attempt: its bin's rows were given 4 (K stays 3, the others' 3).
      expect(s.bins).toEqual([
        { n: 3, c: 0, count: 1, recorded: 4 },
        { n: 3, c: 2, count: 2 },
        { n: 3, c: 3, count: 1 },
      ]);
      expect([s.rows, s.trials, s.passes, s.ungraded, s.k_max]).toEqual([4, 12, 7, 1, 3]);
      expect(s.mean_accuracy).toBeCloseTo(7 / 12, 12);
      expect(s.pass_hat_k['1']).toBeCloseTo(7 / 12, 12);
      expect(s.pass_hat_k['2']).toBeCloseTo(5 / 12, 12);
      expect(s.pass_hat_k['3']).toBeCloseTo(1 / 4, 12);
      expect(s.pass_at_k['2']).toBeCloseTo(3 / 4, 12);
      expect(s.classes).toEqual({ stable_correct: 1, stable_wrong: 1, flip: 2, unclassified: 0 });
      expect(s.flip_rate).toBe(0.5);
      // Every dataset version of the agent version: d2 adds a TTT row → (3,3)×2, 5 rows.
      const all = await versionSummary(store.client, { suite: 's', agent_version: 'v', from: 'summaries' });
      expect(all.bins).toEqual([
        { n: 3, c: 0, count: 1, recorded: 4 },
        { n: 3, c: 2, count: 2 },
        { n: 3, c: 3, count: 2 },
      ]);
      // The pass^k curve reads the same histogram.
      const curve = await passCurve(store.client, {
        suite: 's',
        agent_version: 'v',
        dataset_version: 'd1',
        from: 'summaries',
      });
      expect(curve.map((p) => p.rows)).toEqual([4, 4, 4]);
      [7 / 12, 5 / 12, 1 / 4].forEach((v, i) => expect(curve[i]!.pass_hat_k).toBeCloseTo(v, 12));
      // A version the processors have not folded has no rows, not an error.
      expect(
        (await versionSummary(store.client, { suite: 's', agent_version: 'nope', from: 'summaries' })).bins,
      ).toEqual([]);
    });

    it('is idempotent: the same snapshots again, or an older one after a newer one, change nothing', async () => {
      const scope = { suite: 's', agent_version: 'v', dataset_version: 'd1', from: 'summaries' as const };
      const before = await versionSummary(store.client, scope);
      await writeSnapshots([...unitA, ...unitB, ...unitC, ...unitD]);
      await writeSnapshots([...unitB].reverse()); // p1@7 is older than p1@12: it must not win
      await writeSnapshots(unitA);
      expect(await versionSummary(store.client, scope)).toEqual(before);
      const stored = await (
        await store.client.query({
          query:
            "SELECT partition, next_offset FROM version_summaries FINAL WHERE dataset_version = 'd1' ORDER BY partition",
          format: 'JSONEachRow',
        })
      ).json();
      expect(stored).toEqual([
        { partition: 0, next_offset: 15 },
        { partition: 1, next_offset: 12 },
      ]);
    });

    it('refuses ungradedAsFailure rather than give a wrong number', async () => {
      await expect(
        versionSummary(store.client, { suite: 's', agent_version: 'v', from: 'summaries', ungradedAsFailure: true }),
      ).rejects.toSatisfy(
        (e: unknown) => e instanceof InputError && /cannot count ungraded trials as failures/.test(e.message),
      );
    });

    it('keeps a 1 h and a 24 h production window that start together', async () => {
      const T0 = Date.UTC(2026, 0, 1);
      const w = (lengthMs: number, seq: number, rate: number) => ({
        agent_version: 'pw',
        segment: 'all',
        grader: 'g',
        window_start: `${T0 / 1000}.000`,
        window_end: `${(T0 + lengthMs) / 1000}.000`,
        sampled: 10,
        ungraded: 0,
        weight: 10,
        passed_weight: 10 * rate,
        pass_rate: rate,
        ci_low: rate - 0.1,
        ci_high: rate + 0.1,
        seq,
      });
      const sink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows });
      await sink.write('production_windows', [w(3_600_000, 1, 0.5), w(86_400_000, 1, 0.7), w(3_600_000, 2, 0.6)]);
      await sink.flush();
      await sink.write('production_windows', [w(86_400_000, 1, 0.7)]); // replayed
      await sink.close();
      const all = await productionWindows(store.client, { from: T0, to: T0 + 1, agent_version: 'pw' });
      // Both windows, the 1 h one at its latest seq; shorter first.
      expect(all.map((x) => [x.window_end - x.window_start, x.pass_rate])).toEqual([
        [3_600_000, 0.6],
        [86_400_000, 0.7],
      ]);
      const day = await productionWindows(store.client, {
        from: T0,
        to: T0 + 1,
        agent_version: 'pw',
        windowMs: 86_400_000,
      });
      expect(day.map((x) => x.pass_rate)).toEqual([0.7]);
    });
  });

describe('migration 3 on a store that had production_windows v1', () => {
  it('copies the old rows to production_windows_v2, and running it again changes nothing', async () => {
    // chDB binds one data directory per process: the same one, another database.
    const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk_upgrade_test' });
    try {
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 3) });
      const T0 = Date.UTC(2026, 0, 1);
      const legacy = (start: number, seq: number, rate: number) => ({
        agent_version: 'old',
        segment: 'all',
        grader: 'g',
        window_start: `${start / 1000}.000`,
        window_end: `${(start + 3_600_000) / 1000}.000`,
        sampled: 4,
        ungraded: 0,
        weight: 4,
        passed_weight: 4 * rate,
        pass_rate: rate,
        ci_low: 0,
        ci_high: 1,
        seq,
      });
      // Written straight to the v1 table, as an older passk did.
      await store.client.insert({
        table: 'production_windows',
        values: [
          legacy(T0, 1, 0.25),
          legacy(T0, 2, 0.5),
          legacy(T0 + 3_600_000, 1, 0.75),
          // no verdict in the window: an older passk stored its pass rate as 0
          { ...legacy(T0 + 7_200_000, 1, 0), ungraded: 4, weight: 0, ci_high: 0 },
        ],
        format: 'JSONEachRow',
      });
      expect(await migrate(store.client)).toEqual({
        applied: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
        current: 21,
      });
      const read = async () =>
        (await productionWindows(store.client, { from: T0, to: T0 + 86_400_000, agent_version: 'old' })).map((x) => [
          x.window_start - T0,
          x.pass_rate,
        ]);
      const expected = [
        [0, 0.5],
        [3_600_000, 0.75],
        [7_200_000, null], // migration 6: no graded weight, no pass rate
      ];
      expect(await read()).toEqual(expected);
      // Each statement may run again (a migration interrupted half-way is re-run whole).
      for (const m of MIGRATIONS.filter((x) => x.version >= 3))
        for (const statement of m.up()) await store.client.command({ query: statement });
      expect(await read()).toEqual(expected);
      expect((await appliedMigrations(store.client)).map((m) => m.version)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      ]);
    } finally {
      await store.close();
    }
  });
});

describe('migration 7: old production_windows rows keep no wrong sampled count', () => {
  const T0 = Date.UTC(2026, 0, 2);
  const H = 3_600_000;
  /** A row as the processors wrote it before migration 6: `sampled` held the graded count. */
  const old = (hour: number, graded: number, ungraded: number) => ({
    agent_version: 'old',
    segment: 'all',
    grader: 'g',
    window_start: `${(T0 + hour * H) / 1000}.000`,
    window_end: `${(T0 + (hour + 1) * H) / 1000}.000`,
    sampled: graded,
    ungraded,
    weight: graded,
    passed_weight: graded,
    pass_rate: graded > 0 ? 1 : 0,
    ci_low: 0,
    ci_high: 1,
    seq: graded + ungraded,
  });
  const shown = async (client: Parameters<typeof clickhouseDashboardData>[0]) =>
    (await clickhouseDashboardData(client).production()).windows
      .filter((w) => w.agent_version === 'old')
      .map((w) => [(w.start - T0) / H, w.traces, w.graded]);

  it('a store below migration 6 holds only old rows: each is corrected, exactly, and running it again changes nothing', async () => {
    const store = await openClickHouse({
      kind: 'embedded',
      path: join(dir, 'store'),
      database: 'passk_sampled_below6',
    });
    try {
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 6) });
      // Written with the schema before migration 6 (no late column, a pass rate that cannot be NULL).
      await store.client.insert({
        table: 'production_windows_v2',
        values: [old(0, 1, 2), old(1, 3, 2), old(2, 4, 0), old(3, 0, 5)],
        format: 'JSONEachRow',
      });
      expect(await migrate(store.client)).toEqual({
        applied: [6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
        current: 21,
      });
      const expected = [
        [0, 3, 1], // the window: 1 graded + 2 ungraded showed "graded −1"
        [1, 5, 3],
        [2, 4, 4],
        [3, 5, 0],
      ];
      expect(await shown(store.client)).toEqual(expected);
      for (const statement of MIGRATIONS.find((m) => m.version === 7)!.up())
        await store.client.command({ query: statement });
      expect(await shown(store.client)).toEqual(expected);
    } finally {
      await store.close();
    }
  });

  it('a store already at 6 (old and right rows mixed): certain ones corrected, the rest unknown, new rows untouched', async () => {
    const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk_sampled_at6' });
    try {
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 6) });
      await store.client.insert({
        table: 'production_windows_v2',
        values: [old(0, 1, 2), old(2, 4, 0)],
        format: 'JSONEachRow',
      });
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 7) });
      // After migration 6, written by the processors as they then were: sampled = graded + ungraded (3 + 2).
      await store.client.insert({
        table: 'production_windows_v2',
        values: [{ ...old(1, 3, 2), sampled: 5, late: 0 }],
        format: 'JSONEachRow',
      });
      expect(await migrate(store.client)).toEqual({
        applied: [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
        current: 21,
      });
      // After migration 7, as the processors write now.
      await store.client.insert({
        table: 'production_windows_v2',
        values: [{ ...old(4, 2, 1), sampled: 3, late: 0, sampled_rule: 1 }],
        format: 'JSONEachRow',
      });
      const expected = [
        [0, 3, 1], // sampled 1 < ungraded 2: certainly the graded count, corrected
        [1, null, null], // sampled 5 with 2 ungraded: right under the new rule, or 5 graded under the old; unknown
        [2, 4, 4], // no ungraded trace: the same under both rules
        [4, 3, 2], // written after migration 7: left as it is
      ];
      expect(await shown(store.client)).toEqual(expected);
      for (const statement of MIGRATIONS.find((m) => m.version === 7)!.up(undefined, { applied: new Set([6]) }))
        await store.client.command({ query: statement });
      expect(await shown(store.client)).toEqual(expected);
    } finally {
      await store.close();
    }
  });
});

describe('migration 8 on a store whose row_state holds attempts as an older passk wrote them', () => {
  it('reads old rows (and rows an older writer still sends) as attempt records; running it again changes nothing', async () => {
    const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk_upgrade7_test' });
    try {
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 8) });
      const T0 = Date.UTC(2026, 0, 1);
      const ids = [deterministicEventId(T0, 'a0'), deterministicEventId(T0 + 5000, 'a1')];
      const trials = ids.map((event_id, attempt) => ({
        event_id,
        type: 'TrialRecorded' as const,
        schema_version: 1,
        occurred_at: T0 + attempt * 5000,
        producer: 'old',
        suite: 'up',
        dataset_version: 'd1',
        row_id: 'r1',
        run_id: 'run',
        attempt,
        agent: { version: 'v1' },
        passed: attempt === 0 ? true : null,
      }));
      const sink = createClickHouseRowSink({ client: store.client, maxWaitMs: 5 });
      await sink.writeEvents(trials);
      await sink.close();
      // row_state rows in migration 1's shape, as an older passk wrote them (and may still, while it runs)
      const legacyRow = (agent_version: string) => ({
        event_id: deterministicEventId(T0, 'state', agent_version),
        occurred_at: `${(T0 + 5000) / 1000}.000`,
        producer: 'old',
        schema_version: 1,
        suite: 'up',
        dataset_version: 'd1',
        agent_version,
        row_id: 'r1',
        seq: 2,
        n: 1,
        c: 1,
        ungraded: 1,
        class: 'unclassified',
        attempts: [
          {
            attempt: 0,
            run_id: 'run',
            event_id: ids[0],
            passed: true,
            output: 'h0',
            has_output: true,
            checks: { window: '30', amount: '"full"' },
            has_checks: true,
          },
          {
            attempt: 1,
            run_id: 'run',
            event_id: ids[1],
            passed: null,
            output: null,
            has_output: false,
            checks: {},
            has_checks: false,
          },
        ],
      });
      const insertLegacy = (agent_version: string) =>
        store.client.insert({
          table: 'row_state',
          values: [legacyRow(agent_version)],
          format: 'JSONEachRow',
        });
      await insertLegacy('v1');
      expect(await migrate(store.client)).toEqual({
        applied: [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
        current: 21,
      });
      await insertLegacy('v0');
      const read = async () => {
        const rs = await store.client.query({
          query: 'SELECT agent_version, attempt_records, tags FROM row_state FINAL ORDER BY agent_version',
          format: 'JSONEachRow',
        });
        return rs.json();
      };
      const records = [
        {
          event_id: ids[0],
          run_id: 'run',
          attempt: 0,
          occurred_at: '2026-01-01 00:00:00.000', // the event id's time
          passed: true,
          output_hash: 'h0',
          checks: [
            { name: 'window', answer: '30' },
            { name: 'amount', answer: '"full"' },
          ],
          forbidden_actions: [],
        },
        {
          event_id: ids[1],
          run_id: 'run',
          attempt: 1,
          occurred_at: '2026-01-01 00:00:05.000',
          passed: null,
          output_hash: null,
          checks: [],
          forbidden_actions: [],
        },
      ];
      const expected = [
        { agent_version: 'v0', attempt_records: records, tags: [] },
        { agent_version: 'v1', attempt_records: records, tags: [] },
      ];
      expect(await read()).toEqual(expected);
      // the consistency check reads the attempt ids through attempt_records: the old row agrees with its trials
      const report = await checkConsistency(store.client, { suite: 'up', summaries: false });
      expect(report.differences.filter((d) => d.agent_version === 'v1')).toEqual([]);
      // Each statement may run again (a migration interrupted half-way is re-run whole).
      for (const statement of MIGRATIONS.find((m) => m.version === 7)!.up())
        await store.client.command({ query: statement });
      expect(await read()).toEqual(expected);
      // a newer state of the row, written by this passk, replaces the old one (highest seq) with its own records
      const now = createClickHouseRowSink({ client: store.client, maxWaitMs: 5 });
      const state = fromRowStateChanged({
        event_id: deterministicEventId(T0 + 5000, 'state-3'),
        type: 'RowStateChanged',
        schema_version: 2,
        occurred_at: T0 + 5000,
        producer: 'new',
        suite: 'up',
        dataset_version: 'd1',
        agent_version: 'v1',
        row_id: 'r1',
        seq: 3,
        n: 1,
        c: 1,
        ungraded: 1,
        class: 'unclassified',
        attempt_records: trials.map(toAttemptRecord),
        tags: ['must_not_break'],
      });
      await now.writeEvents([toRowStateChanged(state, 'new')]);
      await now.close();
      const after = (await read()) as {
        agent_version: string;
        attempt_records: { occurred_at: string }[];
        tags: string[];
      }[];
      expect(after[1]).toMatchObject({ agent_version: 'v1', tags: ['must_not_break'] });
      expect(after[1]!.attempt_records.map((a) => a.occurred_at)).toEqual([
        '2026-01-01 00:00:00.000',
        '2026-01-01 00:00:05.000',
      ]);
    } finally {
      await store.close();
    }
  });
});

describe('migration 17: snapshots written before it stay readable', () => {
  it('an old snapshot reads as before (K the fewest graded); the next one of its partition counts every attempt', async () => {
    const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk_summaries_v16' });
    try {
      await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 17) });
      // As an older passk wrote it: r1 (2 graded, 1 pass, 1 ungraded) and r2 (3 of 3), no ungraded_histogram.
      await store.client.insert({
        table: 'version_summaries',
        values: [
          {
            suite: 's',
            dataset_version: 'd1',
            agent_version: 'old',
            partition: 0,
            next_offset: 6,
            rows: 2,
            trials: 5,
            passes: 4,
            ungraded: 1,
            classes: { stable_correct: 1, stable_wrong: 0, flip: 0, unclassified: 1 },
            histogram: { '2,1': 1, '3,3': 1 },
          },
        ],
        format: 'JSONEachRow',
      });
      expect(await migrate(store.client)).toEqual({ applied: [17, 18, 19, 20, 21], current: 21 });
      const scope = { suite: 's', agent_version: 'old', from: 'summaries' } as const;
      // Where r1's ungraded attempt fell is unknown: its bin reads as recorded 2, so K is 2, as before.
      const before = await versionSummary(store.client, scope);
      expect(before.bins).toEqual([
        { n: 2, c: 1, count: 1 },
        { n: 3, c: 3, count: 1 },
      ]);
      expect([before.rows, before.ungraded, before.k_max]).toEqual([2, 1, 2]);
      // The processors' next snapshot of that partition (any new trial) holds it: r1 was given 3, so K is 3.
      const sums: VersionSummaries = new Map();
      const row = (row_id: string, n: number, c: number, ungraded: number): StreamRowState => ({
        ...state('d1', row_id, n, c, ungraded),
        agent_version: 'old',
      });
      applyRowChanges(sums, [
        { before: undefined, after: row('r1', 2, 1, 1) },
        { before: undefined, after: row('r2', 3, 3, 0) },
      ]);
      applyRowChanges(sums, [{ before: row('r2', 3, 3, 0), after: row('r2', 4, 4, 0) }]);
      const sink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows });
      const summaries = [...sums.values()].map((summary) => ({ partition: 0, nextOffset: 7, summary }));
      await toTrialSink(sink).writeTrials({ trials: [], rowStates: [], finished: [], summaries });
      await sink.close();
      const after = await versionSummary(store.client, scope);
      expect(after.bins).toEqual([
        { n: 2, c: 1, count: 1, recorded: 3 },
        { n: 4, c: 4, count: 1 },
      ]);
      expect([after.k_max, after.rows_at_k]).toEqual([3, { '1': 2, '2': 2, '3': 1 }]);
      expect((await passCurve(store.client, scope)).map((p) => p.rows)).toEqual([2, 2, 1]);
    } finally {
      await store.close();
    }
  });
});

/**
 * A new store gets the tables as the migrations leave them directly (`NEW_STORE_TABLES`, one CREATE each): it must be
 * the schema a store gets step by step, from nothing or from an older version, byte for byte, on chDB and a server.
 */
for (const c of storeTargets(dir, 'passk_new_store'))
  describe.skipIf(c.skip !== undefined)(onStore('a new store on', c), () => {
    const withStore = async <T>(database: string, use: (store: StoreClient) => Promise<T>): Promise<T> => {
      // chDB binds one data directory per process: the same one, a database each.
      const store = await openClickHouse({ ...c.target, database: `${c.target.database}_${database}` });
      try {
        return await use(store);
      } finally {
        if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
        await store.close();
      }
    };
    /** The statements `migrate` sends through `command` (DDL and mutations; not the inserts of its records). */
    const commands = (store: StoreClient, seen: string[]): ClickHouseClient =>
      new Proxy(store.client, {
        get: (target, key) => {
          if (key === 'command')
            return (params: { query: string }) => {
              seen.push(params.query);
              return target.command(params);
            };
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    /** `SHOW CREATE TABLE` of every table, with the database's name taken out, and the migrations recorded. */
    const schemaOf = async (store: StoreClient) => {
      const json = async <T>(query: string) =>
        (await (await store.client.query({ query, format: 'JSONEachRow' })).json()) as T[];
      const tables = await json<{ name: string }>(
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      );
      const shown: Record<string, string> = {};
      for (const { name } of tables) {
        const [row] = await json<{ statement: string }>(`SHOW CREATE TABLE \`${name}\``);
        shown[name] = row!.statement.replaceAll(`${store.database}.`, 'DB.');
      }
      const recorded = (await appliedMigrations(store.client)).map(({ version, name, checksum }) => ({
        version,
        name,
        checksum,
      }));
      return { shown, recorded };
    };
    const all = MIGRATIONS.map((m) => m.version);
    const seen: string[] = [];
    let fresh: Promise<Awaited<ReturnType<typeof schemaOf>>> | undefined;
    const newStore = () =>
      (fresh ??= withStore('fresh', async (store) => {
        expect(await migrate(commands(store, seen))).toEqual({ applied: all, current: Math.max(...all) });
        return schemaOf(store);
      }));

    it('gets, in one CREATE per table and no ALTER, the schema of a store migrated step by step from nothing or upgraded from an older version', async () => {
      const created = await newStore();
      expect(seen.filter((q) => !/^CREATE TABLE IF NOT EXISTS /.test(q))).toEqual([]);
      expect(seen).toHaveLength(NEW_STORE_TABLES.length + 1); // and passk_migrations
      const stepwise = await withStore('stepwise', async (store) => {
        // the migrations named: each one's statements, as for a store that has some
        expect(await migrate(store.client, { migrations: MIGRATIONS })).toEqual({
          applied: all,
          current: Math.max(...all),
        });
        return schemaOf(store);
      });
      const upgraded = await withStore('upgraded', async (store) => {
        await migrate(store.client, { migrations: MIGRATIONS.filter((m) => m.version < 8) });
        expect((await migrate(store.client)).applied).toEqual(all.filter((v) => v >= 8));
        return schemaOf(store);
      });
      expect(Object.keys(created.shown)).toEqual([...NEW_STORE_TABLES.map((d) => d.name), 'passk_migrations'].sort());
      expect(created).toEqual(stepwise);
      expect(created).toEqual(upgraded);
    });

    it('a store that a migrate left half-way (a table, no migration recorded) is migrated step by step, to the same schema', async () => {
      const created = await newStore();
      const statements: string[] = [];
      const resumed = await withStore('halfway', async (store) => {
        await store.client.command({ query: MIGRATIONS[0]!.up()[0]! }); // migration 1's first table, `trials` v1
        await migrate(commands(store, statements));
        return schemaOf(store);
      });
      expect(statements.filter((q) => q.startsWith('ALTER TABLE `trials` ADD COLUMN'))).toHaveLength(2); // migrations 10, 19
      expect(resumed).toEqual(created);
    });
  });
