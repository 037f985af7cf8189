import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import { createTraceSampler } from '../../producers/sampler/sampler.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import type { DatasetRowUpserted, FailureConfirmed } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'passk.mjs');
let dir: string;
let data: string;

const passk = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, '--data-dir', data, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
/** The real path from the log to the store: the stream processors, run until they have caught up. */
const processAll = () => {
  const r = passk('process', '--until-caught-up', '--json');
  expect(r.status, r.stderr).toBe(0);
};
type Listed = { source: string; failures: { trace_id: string; why: string[] }[] };
const review = (...args: string[]) => {
  const r = passk('review', '--json', ...args);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
};

// The dataset's first version, as a team would have published it before any production failure (no CLI
// publishes dataset rows yet, so the test publishes the events): r03 is must-not-break.
const T0 = Date.UTC(2026, 0, 1);
const v1Row = (i: number, row_id: string, input: string, expected: string, tags: string[]): DatasetRowUpserted => ({
  event_id: deterministicEventId(T0 + i, 'test-dataset', 'v1', row_id),
  type: 'DatasetRowUpserted',
  schema_version: 1,
  occurred_at: T0 + i,
  producer: 'test',
  dataset_id: 'refunds',
  dataset_version: 'v1',
  row_id,
  input,
  expected,
  tags,
  provenance: { kind: 'manual' },
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-review-'));
  data = join(dir, 'data');
  const log = createEmbeddedEventLog({ dataDir: data });
  await log.publisher.publish([
    v1Row(0, 'r01', 'wrong size, unworn', 'approve', []),
    v1Row(1, 'r03', 'found it cheaper', 'deny', ['must_not_break']),
  ]);
  const recorder = createRecorder({ publisher: log.publisher });
  const sampler = createTraceSampler({ policy: { rate: 1 }, recorder, seed: 1 });
  const base = { agent_version: 'support-v3', segment: 'pro' };
  const at = Date.now() - 3_600_000; // recent: the store keeps traces for their retention only
  sampler.offer({
    ...base,
    trace_id: 't-ok',
    input: 'refund order 1',
    output: 'approve',
    verdicts: [{ grader: 'policy', passed: true }],
    occurred_at: at + 1_000,
  });
  sampler.offer({
    ...base,
    trace_id: 't-bad',
    input: 'refund my opened blender, mail me at kim@example.com',
    output: 'approve',
    verdicts: [{ grader: 'policy', passed: false }],
    occurred_at: at + 2_000,
  });
  sampler.offer({
    ...base,
    trace_id: 't-err',
    input: 'refund order 3',
    error_kind: 'tool_timeout',
    occurred_at: at + 3_000,
  });
  sampler.offer({
    ...base,
    trace_id: 't-sad',
    input: 'refund order 4',
    output: 'deny',
    user_signals: { thumbs: 'down' },
    occurred_at: at + 4_000,
  });
  sampler.offer({
    ...base,
    trace_id: 't-glad',
    input: 'refund order 5',
    output: 'approve',
    user_signals: { thumbs: 'up', rating: 5 },
    occurred_at: at + 5_000,
  });
  await sampler.flush();
  await recorder.close();
  await log.close();
  processAll();
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the review loop end to end: sampled traces → processors → store → review → confirm → processors → dataset export', () => {
  it('lists sampled production failures from the store, newest first, with why (the log gives the same list)', () => {
    const stored = review();
    expect(stored.source).toBe('store');
    expect(stored.failures.map((f) => [f.trace_id, f.why])).toEqual([
      ['t-sad', ['negative_feedback']],
      ['t-err', ['error:tool_timeout']],
      ['t-bad', ['grader:policy']],
    ]);
    const logged = review('--from', 'log');
    expect(logged.source).toBe('log');
    expect(logged.failures).toEqual(stored.failures);
    expect(review('--limit', '1').failures.map((f) => f.trace_id)).toEqual(['t-sad']);
  });

  it('confirming one records a FailureConfirmed linked to the trace, once, and it leaves the list at once', async () => {
    const args = [
      'review',
      '--confirm',
      't-bad',
      '--expected',
      'deny',
      '--dataset',
      'refunds',
      '--reviewer',
      'ana',
      '--note',
      'opened item',
      '--json',
    ];
    const first = passk(...args);
    expect(first.status, first.stderr).toBe(0);
    expect(passk(...args).status).toBe(0); // a second confirmation of the same trace is the same event
    const log = createEmbeddedEventLog({ dataDir: data });
    const confirmed: FailureConfirmed[] = [];
    await readLog(
      log,
      { topics: [TOPICS.datasets] },
      (e) => e.event.type === 'FailureConfirmed' && confirmed.push(e.event),
    );
    await log.close();
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]).toMatchObject({
      trace_id: 't-bad',
      dataset_id: 'refunds',
      expected: 'deny',
      reviewer: 'ana',
      input: 'refund my opened blender, mail me at [EMAIL]',
    });
    // the store does not have the confirmation yet (the processors have not run): the log's confirmations count too
    expect(review().failures.map((f) => f.trace_id)).toEqual(['t-sad', 't-err']);
    expect(passk('review', '--confirm', 'nope', '--expected', 'x', '--dataset', 'd', '--reviewer', 'r').status).toBe(2);
  });

  it('while another process holds the embedded store, review lists from the log and says so; --from store refuses', async () => {
    const store = await openStore(loadConfig({ dataDir: data }, {}));
    try {
      const r = passk('review', '--json');
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/listing from the event log instead/);
      expect(JSON.parse(r.stdout)).toMatchObject({
        source: 'log',
        failures: [{ trace_id: 't-sad' }, { trace_id: 't-err' }],
      });
      expect(passk('review', '--from', 'store').status).toBe(3);
    } finally {
      await store.close();
    }
  });

  it('the processors turn the confirmation into a must-not-break row of a new version; export shows it with the trace link', () => {
    processAll();
    expect(review().failures.map((f) => f.trace_id)).toEqual(['t-sad', 't-err']);
    const versions = JSON.parse(passk('dataset', 'versions', '--dataset', 'refunds', '--json').stdout) as {
      versions: { dataset_version: string; must_not_break_rows: number; from_production: number }[];
    };
    expect(versions.versions.map((v) => [v.dataset_version, v.must_not_break_rows, v.from_production])).toEqual([
      ['v1', 1, 0],
      ['v1.pf1', 2, 1],
    ]);
    const out = join(dir, 'v2.jsonl');
    const r = passk('dataset', 'export', '--dataset', 'refunds', '--version', '2', '--out', out);
    expect(r.status, r.stderr).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((x) => [x.id, x.must_not_break, x.changed_in])).toEqual([
      ['pf-t-bad', true, 'v1.pf1'],
      ['r01', false, 'v1'],
      ['r03', true, 'v1'],
    ]);
    expect(rows[0]).toMatchObject({
      input: 'refund my opened blender, mail me at [EMAIL]',
      expected: 'deny',
      dataset_version: 'v1.pf1',
      provenance: { kind: 'production_failure', trace_id: 't-bad', note: 'opened item' },
    });
    const v1 = passk('dataset', 'export', '--dataset', 'refunds', '--version', 'v1', '--must-not-break-only');
    expect(
      v1.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual(['r03']);
    expect(passk('dataset', 'export', '--dataset', 'refunds', '--version', 'latest').stdout).toBe(
      readFileSync(out, 'utf8'),
    );
    expect(passk('dataset', 'export', '--dataset', 'refunds', '--version', '9').status).toBe(2);
  });
});
