import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore, type Store } from '../../deploy/store.ts';
import { simulateJudgments } from '../../demo/judges.ts';
import type { PasskEvent, StabilityClass, TraceSampled, TrialRecorded } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { createClickHouseRowSink } from '../../sinks/clickhouse/index.ts';
import { clickhouseDashboardData } from '../../web/clickhouseData.ts';
import type { DashboardData } from '../../web/data.ts';
import { createMemoryDashboardData } from '../../web/memoryData.ts';
import { RowQuery } from '../../web/rowPage.ts';

/**
 * The dashboard's store adapter on embedded chDB, against the in-memory adapter over the same events (both run the
 * core on what they hold, so they must agree), plus the reads only the store has: production windows from traces,
 * flips on repeated inputs, dataset versions with provenance, the watermark.
 */
const T0 = Date.UTC(2026, 10, 1, 9);
const env = (type: string, at: number, ...id: (string | number)[]) => ({
  event_id: deterministicEventId(at, type, ...id),
  schema_version: 1,
  occurred_at: at,
  producer: 'dashboard-test',
});

// Four rows, two versions, three attempts. r1: stable-correct → stable-wrong, diverging at the second check.
const verdicts: Record<string, Record<string, boolean[]>> = {
  v1: { r1: [true, true, true], r2: [true, false, true], r3: [false, false, false], r4: [true, true, true] },
  v2: { r1: [false, false, false], r2: [true, true, true], r3: [true, true, true], r4: [true, true, true] },
};
const trials: TrialRecorded[] = Object.entries(verdicts).flatMap(([version, rows]) =>
  Object.entries(rows).flatMap(([row, vs]) =>
    vs.map((passed, attempt) => ({
      ...env('TrialRecorded', T0 + attempt * 1000, version, row, attempt),
      type: 'TrialRecorded' as const,
      suite: 's',
      dataset_id: 'd',
      dataset_version: '1',
      row_id: row,
      run_id: `${version}-run`,
      attempt,
      agent: { version },
      output: passed ? 'deny' : 'approve',
      expected: 'deny',
      input: `{"message":"row ${row}"}`,
      passed,
      checks: [
        { name: 'return_window', answer: true },
        { name: 'proof_of_purchase', answer: row === 'r1' && version === 'v2' },
        // r2's answer flips from attempt to attempt (the explorer's flipping checks)
        ...(row === 'r2' ? [{ name: 'receipt_read', answer: attempt % 2 === 0 }] : []),
      ],
      tags: row === 'r1' ? ['must_not_break'] : [],
      latency_ms: 100 + 10 * attempt,
      cost_usd: 0.001 * (attempt + 1),
      ...(passed ? {} : { failure_category: 'policy_violation' as const }),
    })),
  ),
);
const trace = (i: number, fingerprint: string, passed: boolean, segment = 'standard'): TraceSampled => ({
  ...env('TraceSampled', T0 + i * 600_000, i),
  type: 'TraceSampled',
  trace_id: `t${i}`,
  agent_version: 'v1',
  segment,
  input_fingerprint: fingerprint,
  sampling: { policy: 'uniform', probability: segment === 'standard' ? 0.5 : 1 },
  verdicts: [{ grader: 'audit', passed }],
});
// Hour 0: three traces (one of them repeated with a different verdict later); hour 1: two.
const traces = [
  trace(0, 'fa', true),
  trace(1, 'fb', false),
  trace(2, 'fc', true, 'high_value'),
  trace(6, 'fa', false),
  trace(7, 'fd', true),
];
const { judgments, labels } = simulateJudgments({ items: 12, pairs: 6 });
const judgmentEvents: PasskEvent[] = [
  ...judgments.map((j, i) => ({ ...env('JudgmentRecorded', T0 + i, i), type: 'JudgmentRecorded' as const, ...j })),
  ...labels.map((l, i) => ({ ...env('LabelRecorded', T0 + i, i), type: 'LabelRecorded' as const, ...l })),
] as PasskEvent[];
const datasetEvents: PasskEvent[] = [
  ...['r1', 'r2', 'r3', 'r4'].map((row, i) => ({
    ...env('DatasetRowUpserted', T0 + i, row),
    type: 'DatasetRowUpserted' as const,
    dataset_id: 'd',
    dataset_version: '1',
    row_id: row,
    input: `{"message":"row ${row}"}`,
    expected: 'deny',
    tags: row === 'r1' ? ['must_not_break'] : [],
    provenance: { kind: 'manual' as const },
  })),
  {
    ...env('DatasetRowUpserted', T0 + 3_600_000, 'prod'),
    type: 'DatasetRowUpserted',
    dataset_id: 'd',
    dataset_version: '2',
    row_id: 'prod-1',
    input: 'a production request',
    expected: 'deny',
    tags: ['must_not_break'],
    provenance: { kind: 'production_failure', trace_id: 't1' },
  },
  {
    // version 3 removes r2 (a tombstone, as passk dataset publish writes for a row the file dropped)
    ...env('DatasetRowUpserted', T0 + 5_400_000, 'gone'),
    type: 'DatasetRowUpserted',
    dataset_id: 'd',
    dataset_version: '3',
    row_id: 'r2',
    input: `{"message":"row r2"}`,
    expected: 'deny',
    tags: [],
    provenance: { kind: 'manual' },
    removed: true,
  },
];
const mnb = (row_id: string, b: StabilityClass, bc: number, c: StabilityClass, cc: number) => ({
  suite: 's',
  dataset_version: '1',
  row_id,
  baseline: { class: b, c: bc, n: 3 },
  candidate: { class: c, c: cc, n: 3 },
});
const gate: PasskEvent = {
  ...env('GateEvaluated', T0 + 7_200_000, 'g'),
  schema_version: 2,
  type: 'GateEvaluated',
  gate_id: 'g1',
  suite: 's',
  dataset_version: '1',
  baseline: 'v1',
  candidate: 'v2',
  verdict: 'fail',
  reasons: [{ rule: 'must_not_break_stable_correct', passed: false, detail: 'r1 broke', rows: ['r1'] }],
  evidence: [{ row_id: 'r1', baseline_attempts: [], candidate_attempts: [] }],
  adaptive: { attempts: 27, confirmations: 3, rows: 6, max_k: 6 },
  // r1 is protected (and broke); r2 flips and r3 is stable-wrong on the baseline: no rule can protect them
  must_not_break: [
    { ...mnb('r1', 'stable_correct', 3, 'stable_wrong', 0), status: 'broken', outcome: 'confirmed_regression' },
    { ...mnb('r2', 'flip', 2, 'stable_correct', 3), status: 'not_covered', outcome: null },
    { ...mnb('r3', 'stable_wrong', 0, 'stable_correct', 3), status: 'not_covered', outcome: null },
  ],
};
const all: PasskEvent[] = [...trials, ...traces, ...judgmentEvents, ...datasetEvents, gate];

let dir: string;
let store: Store;
let data: DashboardData;
const memory = createMemoryDashboardData(all).data;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-dashboard-'));
  store = await openStore(loadConfig({ dataDir: dir }, {}, dir));
  const sink = createClickHouseRowSink({ client: store.client });
  await sink.writeEvents(all);
  await sink.flush();
  await sink.close();
  data = clickhouseDashboardData(store.client);
}, 120_000);

afterAll(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard data on chDB', () => {
  it('lists the versions and builds the overview exactly as the in-memory adapter does', async () => {
    expect((await data.groups()).map((g) => [g.agent_version, g.rows, g.trials])).toEqual([
      ['v1', 4, 12],
      ['v2', 4, 12],
    ]);
    const scope = { suite: 's', dataset_version: '1' };
    const [stored, inMemory] = [await data.overview(scope), await memory.overview(scope)];
    expect(stored).toEqual(inMemory);
    // v1: 3 + 2 + 0 + 3 of 12; v2: 0 + 3 + 3 + 3 of 12.
    expect(stored.map((g) => g.mean_accuracy)).toEqual([8 / 12, 9 / 12]);
  });

  it('compares by row, names the must-not-break rows, and drills down to the first divergent check', async () => {
    const q = { suite: 's', dataset_version: '1', baseline: 'v1', candidate: 'v2' };
    const cmp = (await data.compare(q))!;
    expect(cmp).toEqual(await memory.compare(q));
    expect(cmp.lost_stable_correct).toEqual(['r1']);
    expect(cmp.became_stable_correct).toEqual(['r2', 'r3']);
    expect(cmp.must_not_break_rows).toEqual(['r1']);
    const row = (await data.row({ suite: 's', dataset_version: '1', row_id: 'r1', versions: ['v1', 'v2'] }))!;
    expect(row.first_divergence?.check).toBe('proof_of_purchase');
    expect(row.versions.map((v) => [v.agent_version, v.class, v.attempts.length])).toEqual([
      ['v1', 'stable_correct', 3],
      ['v2', 'stable_wrong', 3],
    ]);
    expect(row.tags).toEqual(['must_not_break']);
  });

  it("gives the row explorer's rows exactly as the in-memory adapter does", async () => {
    const scope = { suite: 's', dataset_version: '1', ...RowQuery.parse({}) };
    const stored = await data.rows(scope);
    expect(stored).toEqual(await memory.rows(scope));
    for (const q of [
      { sort: 'b.latency', dir: 'desc' },
      { check: 'receipt_read' },
      { q: 'R2' },
      { limit: '1', row: 'r3' },
    ]) {
      const page = { suite: 's', dataset_version: '1', ...RowQuery.parse(q) };
      expect(await data.rows(page)).toEqual(await memory.rows(page));
    }
    expect(stored.rows.map((r) => [r.row_id, r.versions.v1?.class, r.versions.v2?.class])).toEqual([
      ['r1', 'stable_correct', 'stable_wrong'],
      ['r2', 'flip', 'stable_correct'],
      ['r3', 'stable_wrong', 'stable_correct'],
      ['r4', 'stable_correct', 'stable_correct'],
    ]);
    expect(stored.rows[1]!.versions.v1!).toMatchObject({
      n: 3,
      c: 2,
      attempts: 3,
      output_flip: true,
      flipping_checks: ['receipt_read'],
      failure_categories: ['policy_violation'],
      mean_latency_ms: 110,
    });
    expect(stored.failure_categories).toEqual(['policy_violation']);
  });

  it('pages the sampled traces with their total, failures counted exactly, as the in-memory adapter does', async () => {
    const ids = (l: { traces: { trace_id: string }[] }) => l.traces.map((t) => t.trace_id);
    // newest first: t7, t6 (hour 1), then t2, t1, t0; failures (a failed verdict): t6 and t1
    const page = await data.traces({ limit: 2, offset: 1 });
    expect([ids(page), page.offset, page.total]).toEqual([['t6', 't2'], 1, 5]);
    const failed = await data.traces({ failed: true, limit: 1, offset: 1 });
    expect([ids(failed), failed.offset, failed.total]).toEqual([['t1'], 1, 2]);
    expect(failed.traces[0]!.why).toEqual(['grader:audit']);
    expect((await data.traces({ failed: true, offset: 2 })).traces).toEqual([]);
    for (const q of [{ limit: 2, offset: 1 }, { failed: true, limit: 1, offset: 1 }, { offset: 9 }]) {
      const [stored, inMemory] = [await data.traces(q), await memory.traces(q)];
      expect([ids(stored), stored.offset, stored.total]).toEqual([ids(inMemory), inMemory.offset, inMemory.total]);
    }
  });

  it('shows gates, judges and dataset versions with their production provenance', async () => {
    expect(await data.gates({ suite: 's' })).toEqual([
      expect.objectContaining({
        gate_id: 'g1',
        verdict: 'fail',
        evidence_rows: 1,
        repeated_verdict: false,
        reasons: [expect.objectContaining({ rows: ['r1'] })],
        adaptive: { attempts: 27, confirmations: 3, rows: 6, max_k: 6 },
        unprotected: [
          { suite: 's', dataset_version: '1', row_id: 'r2', baseline: { class: 'flip', c: 2, n: 3 } },
          { suite: 's', dataset_version: '1', row_id: 'r3', baseline: { class: 'stable_wrong', c: 0, n: 3 } },
        ],
      }),
    ]);
    expect(await data.gates({ suite: 's' })).toEqual(await memory.gates({ suite: 's' }));
    expect(await data.judges()).toEqual(await memory.judges());
    const versions = await data.datasets();
    expect(versions.map((v) => [v.dataset_version, v.rows, v.must_not_break.map((r) => r.row_id), v.removed])).toEqual([
      ['1', 4, ['r1'], []],
      ['2', 5, ['prod-1', 'r1'], []],
      ['3', 4, ['prod-1', 'r1'], ['r2']],
    ]);
    expect(versions).toEqual(await memory.datasets());
    expect(versions[1]!.from_production).toEqual([
      expect.objectContaining({ row_id: 'prod-1', provenance: { kind: 'production_failure', trace_id: 't1' } }),
    ]);
  });

  it('weights production traces per window and finds flips on repeated inputs', async () => {
    const prod = await data.production();
    const hour0 = prod.windows.filter((w) => w.start === T0);
    // standard: t0 passed, t1 failed, both weight 2 → 0.5; high_value: t2 passed → 1.
    expect(hour0.map((w) => [w.segment, w.traces, w.pass_rate])).toEqual([
      ['high_value', 1, 1],
      ['standard', 2, 0.5],
    ]);
    expect(prod.repeated_input_flips).toEqual([
      {
        input_fingerprint: 'fa',
        agent_version: 'v1',
        traces: 2,
        verdicts: { pass: 1, fail: 1 },
        trace_ids: expect.arrayContaining(['t0', 't6']),
      },
    ]);
  });

  it('lists the dead letters with their source position, reason and a preview of their bytes', async () => {
    expect(await data.deadLetters()).toEqual({ total: 0, by_stage: {}, letters: [] });
    const sink = createClickHouseRowSink({ client: store.client });
    const letter = {
      source: { topic: 'passk.traces', partition: 1, offset: 41, key: 'v1' },
      value: new Uint8Array([0x00, 0x7b, 0x22, 0x78, 0x22, 0x3a, 0x31, 0x7d, 0xc3, 0x28]),
      reason: 'undecodable: The encoded data was not valid for encoding utf-8',
    };
    await sink.writeDeadLetters([letter]);
    await sink.writeDeadLetters([letter]); // another group read it too: one row
    await sink.close();
    const dlq = await data.deadLetters();
    expect(dlq.total).toBe(1);
    expect(dlq.by_stage).toEqual({ decode: 1 });
    expect(dlq.letters).toEqual([
      expect.objectContaining({
        id: 'passk.traces/1/41',
        stage: 'decode',
        source_topic: 'passk.traces',
        source_partition: 1,
        source_offset: 41,
        reason: letter.reason,
        bytes: 10,
        preview: '·{"x":1}·(',
      }),
    ]);
  });

  it('moves its watermark when something is written', async () => {
    const before = await data.watermark();
    expect(await data.watermark()).toBe(before);
    const sink = createClickHouseRowSink({ client: store.client });
    await sink.writeEvents([trace(9, 'fe', true)]);
    await sink.close();
    expect(await data.watermark()).not.toBe(before);
  });
});
