import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkConsistency, openClickHouse, rowToTrial, select, type StoreClient } from '../sinks/clickhouse/index.ts';
import { TRIAL_COLUMNS, TrialRow } from '../sinks/clickhouse/rows/trialRow.ts';
import { ATTEMPTS, benchAttempts, generateStore, trial, VERSIONS } from './generatedStore.ts';

/**
 * The generated store (issue #32's first-paint bench and browser test): its trials are the events `trial()` describes, and the processors' tables agree with them as `passk check` checks it. ROWS: enough rows for every
 * (row, attempt) residue the formulas use (mod 3, 5, 10 and 50). With the default 5 attempts and with 2
 * (PASSK_BENCH_ATTEMPTS=2: 250k rows per version in 1M trials), where every row is unclassified.
 */
const ROWS = 150;

describe.each([ATTEMPTS, 2])('generateStore, %i attempts', (attempts) => {
  let dir: string;
  let store: StoreClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'passk-generated-'));
    const generated = await generateStore({ dataDir: dir, rows: ROWS, attempts });
    expect(generated).toMatchObject({ rows: ROWS, attempts, trials: ROWS * VERSIONS.length * attempts });
    store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk' });
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the trials of trial(row, v, attempt), every field', async () => {
    const rows = await select(
      store.client,
      TrialRow,
      `SELECT ${TRIAL_COLUMNS} FROM trials FINAL ORDER BY occurred_at, event_id`,
    );
    const expected = Array.from({ length: ROWS }, (_, row) =>
      VERSIONS.flatMap((_, v) => Array.from({ length: attempts }, (_, a) => trial(row, v, a))),
    ).flat();
    expect(rows.map(rowToTrial)).toEqual(expected);
  });

  it('writes row states, summaries and runs that agree with the trials', async () => {
    const report = await checkConsistency(store.client);
    expect(report.differences).toEqual([]);
    expect(report.versions).toEqual([]);
    expect(report.checked.map((v) => [v.agent_version, v.ok])).toEqual(VERSIONS.map((v) => [v, true]));
    expect(report.rows).toBe(ROWS * VERSIONS.length);
    const [counts] = await select(
      store.client,
      z.object({ runs: z.coerce.number(), dataset_rows: z.coerce.number(), gates: z.coerce.number() }),
      `SELECT (SELECT count() FROM runs FINAL) AS runs, (SELECT count() FROM dataset_rows FINAL) AS dataset_rows,
              (SELECT count() FROM gate_decisions FINAL) AS gates`,
    );
    expect(counts).toEqual({ runs: VERSIONS.length, dataset_rows: ROWS, gates: 1 });
    const ks = await select(store.client, z.object({ k: z.coerce.number() }), 'SELECT k FROM runs FINAL');
    expect(ks.map((r) => r.k)).toEqual(VERSIONS.map(() => attempts));
  });
});

describe('benchAttempts', () => {
  it('reads PASSK_BENCH_ATTEMPTS, 5 when unset, and refuses what the store cannot hold', () => {
    expect(benchAttempts({})).toBe(ATTEMPTS);
    expect(benchAttempts({ PASSK_BENCH_ATTEMPTS: '2' })).toBe(2);
    for (const bad of ['0', '6', '2.5', 'two']) expect(() => benchAttempts({ PASSK_BENCH_ATTEMPTS: bad })).toThrow();
  });
});
