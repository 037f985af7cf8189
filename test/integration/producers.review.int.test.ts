import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import { createTraceSampler } from '../../producers/sampler/sampler.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import type { FailureConfirmed } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'passk.mjs');
let dir: string;
let data: string;

const passk = (...args: string[]) => spawnSync(process.execPath, [BIN, '--data-dir', data, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-review-'));
  data = join(dir, 'data');
  const log = createEmbeddedEventLog({ dataDir: data });
  const recorder = createRecorder({ publisher: log.publisher });
  const sampler = createTraceSampler({ policy: { rate: 1 }, recorder, seed: 1 });
  const base = { agent_version: 'support-v3', segment: 'pro' };
  sampler.offer({ ...base, trace_id: 't-ok', input: 'refund order 1', output: 'approve', verdicts: [{ grader: 'policy', passed: true }], occurred_at: 1_000 });
  sampler.offer({ ...base, trace_id: 't-bad', input: 'refund my opened blender, mail me at kim@example.com', output: 'approve', verdicts: [{ grader: 'policy', passed: false }], occurred_at: 2_000 });
  sampler.offer({ ...base, trace_id: 't-err', input: 'refund order 3', error_kind: 'tool_timeout', occurred_at: 3_000 });
  sampler.offer({ ...base, trace_id: 't-sad', input: 'refund order 4', output: 'deny', user_signals: { thumbs: 'down' }, occurred_at: 4_000 });
  await sampler.flush();
  await recorder.close();
  await log.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the review loop (producer side)', () => {
  it('lists sampled production failures, newest first, with why', () => {
    const r = passk('review', '--json');
    expect(r.status, r.stderr).toBe(0);
    const { failures } = JSON.parse(r.stdout) as { failures: { trace_id: string; why: string[] }[] };
    expect(failures.map((f) => [f.trace_id, f.why])).toEqual([
      ['t-sad', ['negative_feedback']],
      ['t-err', ['error:tool_timeout']],
      ['t-bad', ['grader:policy']],
    ]);
  });

  it('confirming one records a FailureConfirmed linked to the trace, once, and it leaves the list', async () => {
    const args = ['review', '--confirm', 't-bad', '--expected', 'deny', '--dataset', 'refunds', '--reviewer', 'ana', '--note', 'opened item', '--json'];
    const first = passk(...args);
    expect(first.status, first.stderr).toBe(0);
    expect(passk(...args).status).toBe(0); // a second confirmation of the same trace is the same event
    const log = createEmbeddedEventLog({ dataDir: data });
    const confirmed: FailureConfirmed[] = [];
    await readLog(log, { topics: [TOPICS.datasets] }, (e) => e.event.type === 'FailureConfirmed' && confirmed.push(e.event));
    await log.close();
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]).toMatchObject({ trace_id: 't-bad', dataset_id: 'refunds', expected: 'deny', reviewer: 'ana', input: 'refund my opened blender, mail me at [EMAIL]' });
    const left = JSON.parse(passk('review', '--json').stdout) as { failures: { trace_id: string }[] };
    expect(left.failures.map((f) => f.trace_id)).toEqual(['t-sad', 't-err']);
    expect(passk('review', '--confirm', 'nope', '--expected', 'x', '--dataset', 'd', '--reviewer', 'r').status).toBe(2);
  });

  it('dataset export writes a version from the store as JSONL, with must-not-break and the trace link', () => {
    // The processors do not yet turn FailureConfirmed into a dataset row; a fixture does that step here.
    const seed = spawnSync(process.execPath, ['--import', 'tsx', 'test/integration/producers-fixtures/seedDatasetStore.ts', data], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
    expect(seed.status, seed.stderr).toBe(0);
    const out = join(dir, 'v2.jsonl');
    const r = passk('dataset', 'export', '--dataset', 'refunds', '--version', '2', '--out', out);
    expect(r.status, r.stderr).toBe(0);
    const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((x) => [x.id, x.must_not_break, x.changed_in])).toEqual([
      ['prod-t-bad', true, 'v2'],
      ['r01', false, 'v1'],
      ['r03', true, 'v1'],
    ]);
    expect(rows[0]).toMatchObject({ expected: 'deny', dataset_version: 'v2', provenance: { kind: 'production_failure', trace_id: 't-bad', note: 'opened item' } });
    const v1 = passk('dataset', 'export', '--dataset', 'refunds', '--version', 'v1', '--must-not-break-only');
    expect(v1.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['r03']);
    expect(passk('dataset', 'export', '--dataset', 'refunds', '--version', '9').status).toBe(2);
  });
});
