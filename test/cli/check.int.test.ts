import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import { fromRowStateChanged } from '../../processors/folds/rowState.ts';
import { applyRowChanges, type VersionSummaries } from '../../processors/folds/versionSummary.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { PasskEvent, TrialRecorded } from '../../schemas/events/index.ts';
import type { DeadLetter } from '../../processors/ports.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { createClickHouseRowSink, migrate, openClickHouse, writeTrialUnit } from '../../sinks/clickhouse/index.ts';

/**
 * `passk check` as a user runs it (`node bin/passk.mjs`), on an embedded store in a temp data dir.
 * The test process writes the store, closes it (chDB: one process per store directory), then runs
 * the command.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'passk-check-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

type Run = { code: number; stdout: string; stderr: string };
/** The configured store is the embedded one under `dataDir`: no server, no config file from the environment. */
const passk = (...args: string[]): Promise<Run> => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      // the run's build of the CLI (PASSK_CLI_BUILD, test/setup/cliBuild.ts) is no setting: kept
      ([k]) => !k.startsWith('CLICKHOUSE_') && (!k.startsWith('PASSK_') || k === 'PASSK_CLI_BUILD'),
    ),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'bin/passk.mjs'), '--data-dir', dataDir, ...args],
      { cwd: dataDir, env: { ...env, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
};

/** Writes events (and snapshots) to the store the command will read, then closes it. */
const writeStore = async (events: PasskEvent[], summaries: VersionSummaries[] = []): Promise<void> => {
  const store = await openClickHouse({ kind: 'embedded', path: join(dataDir, 'store'), database: 'passk' });
  try {
    await migrate(store.client);
    const sink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows });
    await writeTrialUnit(sink, {
      trials: events.filter((e): e is TrialRecorded => e.type === 'TrialRecorded'),
      rowStates: events.filter((e): e is RowStateChanged => e.type === 'RowStateChanged'),
      finished: [],
      summaries: summaries.flatMap((sums, partition) =>
        [...sums.values()].map((summary) => ({ partition, nextOffset: 100, summary })),
      ),
    });
    await sink.close();
  } finally {
    await store.close();
  }
};

/** Writes dead letters as the processors do (stage 'decode', real bytes) to the store, then closes it. */
const writeDeadLetters = async (letters: DeadLetter[]): Promise<void> => {
  const store = await openClickHouse({ kind: 'embedded', path: join(dataDir, 'store'), database: 'passk' });
  try {
    const sink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows });
    await sink.writeDeadLetters(letters);
    await sink.writeDeadLetters(letters); // a replay, or a second consumer group: stored once
    await sink.close();
  } finally {
    await store.close();
  }
};
const poison: DeadLetter[] = [
  {
    source: { topic: 'passk.trials', partition: 2, offset: 17, key: 'k' },
    value: new Uint8Array([0xff, 0xfe, 0x7b, 0x22, 0x61, 0x22, 0x7d]),
    reason: 'undecodable: The encoded data was not valid for encoding utf-8',
  },
  {
    source: { topic: 'passk.rowstate', partition: 0, offset: 3, key: 'r' },
    value: new TextEncoder().encode('{"type":"TrialRecorded","attempt":-1}'),
    reason: 'schema: attempt: Too small: expected number to be >=0',
  },
];

const T0 = Date.UTC(2026, 0, 1);
let n = 0;
const trial = (row: string, attempt: number, passed: boolean | null): TrialRecorded => ({
  event_id: deterministicEventId(T0 + n, 'check-test', n++),
  type: 'TrialRecorded',
  schema_version: 1,
  occurred_at: T0 + attempt,
  producer: 'passk-test/0',
  suite: 'airline',
  dataset_version: 'd1',
  row_id: row,
  run_id: 'run-1',
  attempt,
  agent: { version: 'v1' },
  passed,
});
/** The row state of a row's trials, as the processors would write it. */
const stateOf = (ts: TrialRecorded[], seq: number, override: Partial<RowStateChanged> = {}): RowStateChanged => ({
  event_id: deterministicEventId(T0, 'check-state', n++),
  type: 'RowStateChanged',
  schema_version: 2,
  occurred_at: T0,
  producer: 'passk-test/0',
  suite: 'airline',
  dataset_version: 'd1',
  agent_version: 'v1',
  row_id: ts[0]!.row_id,
  seq,
  n: ts.filter((t) => t.passed !== null).length,
  c: ts.filter((t) => t.passed === true).length,
  ungraded: ts.filter((t) => t.passed === null).length,
  class: 'unclassified',
  attempt_records: ts.map(toAttemptRecord),
  ...override,
});

// r1: T T F (n 3, c 2); r2: T T T + one ungraded (n 3, c 3, ungraded 1). Both rows in partition 0.
const r1 = [trial('r1', 0, true), trial('r1', 1, true), trial('r1', 2, false)];
const r2 = [trial('r2', 0, true), trial('r2', 1, true), trial('r2', 2, true), trial('r2', 3, null)];
const states = [stateOf(r1, 3), stateOf(r2, 4)];
const partition0: VersionSummaries = new Map();
applyRowChanges(
  partition0,
  states.map((s) => ({ before: undefined, after: fromRowStateChanged(s) })),
);

const results = {} as Record<
  | 'consistent'
  | 'json'
  | 'unknownSuite'
  | 'badFlag'
  | 'help'
  | 'dead'
  | 'deadJson'
  | 'broken'
  | 'brokenJson'
  | 'locked'
  | 'migrateLocked',
  Run
>;
beforeAll(async () => {
  await writeStore([...r1, ...r2, ...states], [partition0]);
  results.consistent = await passk('check');
  results.json = await passk('check', '--suite', 'airline', '--json');
  results.unknownSuite = await passk('check', '--suite', 'retail');
  results.badFlag = await passk('check', '--suite', '');
  results.help = await passk('check', '--help');
  await writeDeadLetters(poison);
  results.dead = await passk('--width', '80', 'check');
  results.deadJson = await passk('check', '--json');
  // The row state of r1 loses a pass at a higher seq: trials and summaries still say c = 2.
  await writeStore([stateOf(r1, 9, { c: 1 })]);
  results.broken = await passk('check');
  results.brokenJson = await passk('check', '--json');
  // another process (this one) holds the embedded store
  const held = await openClickHouse({ kind: 'embedded', path: join(dataDir, 'store'), database: 'passk' });
  try {
    results.locked = await passk('check');
    results.migrateLocked = await passk('migrate');
  } finally {
    await held.close();
  }
}, 180_000);

describe('passk check', () => {
  it('prints a table per version and exits 0 when trials, row state and summaries agree', () => {
    const r = results.consistent;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // rows 2, graded 6, passes 5, ungraded 1, mean accuracy 5/6 = 83.3%
    const line = r.stdout.split('\n').find((l) => l.includes('airline'))!;
    expect(
      line
        .split('│')
        .map((c) => c.trim())
        .filter(Boolean),
    ).toEqual(['airline', 'd1', 'v1', '2', '6', '5', '1', '83.3%', 'consistent']);
    expect(r.stdout).toContain('trials / row_state / version_summaries');
    expect(r.stdout).toContain('consistent: 2 rows in 1 versions');
  });

  it('lists the dead letters: where each came from, why, the start of its bytes; once each; exit 0 still', () => {
    expect(results.consistent.stdout).toMatch(/Dead letters\s+none/);
    const r = results.dead;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Dead letters (2)');
    expect(r.stdout).toContain('passk.trials 2/17');
    expect(r.stdout).toContain('passk.rowstate 0/3');
    expect(r.stdout).toContain('··{"a"}');
    expect(r.stdout).toMatch(/attempt: Too small/);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const out = JSON.parse(results.deadJson.stdout);
    expect(out.dead_letters.total).toBe(2);
    expect(out.dead_letters.by_stage).toEqual({ decode: 2 });
    expect(out.dead_letters.letters.map((l: { id: string }) => l.id).sort()).toEqual([
      'passk.rowstate/0/3',
      'passk.trials/2/17',
    ]);
    expect(out.dead_letters.letters.find((l: { id: string }) => l.id === 'passk.trials/2/17')).toMatchObject({
      stage: 'decode',
      source_topic: 'passk.trials',
      source_partition: 2,
      source_offset: 17,
      bytes: 7,
      preview: '··{"a"}',
    });
  });

  it('--json prints the whole report', () => {
    const out = JSON.parse(results.json.stdout);
    expect(results.json.code).toBe(0);
    expect(out).toMatchObject({ database: 'passk', rows: 2, differences: [], versions: [], summaries: true, ok: true });
    expect(out.store).toBe(join(dataDir, 'store'));
    const [v] = out.checked;
    expect(v.from_summaries).toEqual(v.from_trials);
    expect(v.from_trials).toMatchObject({ rows: 2, trials: 6, passes: 5, ungraded: 1 });
    expect(v.from_trials.pass_hat_k['3']).toBeCloseTo(0.5, 12); // r1: 0, r2: 1
  });

  it('exits 1 and names the row and the differing numbers when the sources disagree', () => {
    const r = results.broken;
    expect(r.code).toBe(1);
    // passes: trials 5, row state 4, summaries 5
    expect(r.stdout).toContain('5 / 4 / 5');
    expect(r.stdout).toContain('airline · d1 · v1 · r1: trials n 3, c 2, ungraded 0; row_state n 3, c 1, ungraded 0');
    expect(r.stdout).toContain('NOT consistent: 1 of 2 rows and 1 of 1 versions differ');
    const out = JSON.parse(results.brokenJson.stdout);
    expect(results.brokenJson.code).toBe(1);
    expect(out.ok).toBe(false);
    expect(
      out.differences.map((d: { row_id: string; trials_c: number; state_c: number }) => [
        d.row_id,
        d.trials_c,
        d.state_c,
      ]),
    ).toEqual([['r1', 2, 1]]);
  });

  it('exits 2 on bad input: a suite the store does not hold, an empty --suite', () => {
    expect(results.unknownSuite.code).toBe(2);
    expect(results.unknownSuite.stderr).toContain(
      'the store holds no trials, row states or summaries of suite "retail"',
    );
    expect(results.badFlag.code).toBe(2);
    expect(results.badFlag.stderr).toContain('--suite needs a suite name');
  });

  it('exits 3 and says who holds the store when another process holds it (check and migrate alike)', () => {
    for (const r of [results.locked, results.migrateLocked]) {
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/is held by another passk process/);
    }
  });

  it('--help explains the command with an example and the exit codes', () => {
    expect(results.help.code).toBe(0);
    expect(results.help.stdout).toContain('passk check --suite airline --json');
    expect(results.help.stdout).toContain('Exit codes: 0 consistent, 1 not consistent, 2 bad input');
  });
});
