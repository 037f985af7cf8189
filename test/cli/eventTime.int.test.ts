import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';

/**
 * Issue 26, item 4: a trace sampled without `occurred_at` is dated when it was received. It was dated 1970:
 * the store's 90-day trace retention dropped it as soon as it was written, and `passk review` showed 0
 * failures.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-event-time-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) =>
  passk(['--data-dir', join(dir, 'data'), ...args], { env: { NO_COLOR: '1' }, timeoutMs: 200_000 });

describe('a trace without occurred_at', () => {
  it('is dated when passk sample read it, survives the retention, and passk review shows it', async () => {
    const file = join(dir, 'traces.jsonl');
    const trace = (id: string, passed: boolean) =>
      JSON.stringify({
        trace_id: id,
        agent_version: 'v1',
        input: `q ${id}`,
        output: 'a',
        verdicts: [{ grader: 'g', passed }],
      });
    writeFileSync(file, `${trace('t1', false)}\n${trace('t2', true)}\n`);
    const before = Date.now();
    const sampled = await cli('sample', file, '--rate', '1');
    const after = Date.now();
    expect(sampled.code, sampled.stderr).toBe(0);
    const processed = await cli('process', '--until-caught-up');
    expect(processed.code, processed.stderr).toBe(0);
    const review = await cli('review', '--json');
    expect(review.code, review.stderr).toBe(0);
    const failures = (JSON.parse(review.stdout) as { failures: { trace_id: string; occurred_at: number }[] }).failures;
    expect(failures.map((f) => f.trace_id)).toEqual(['t1']);
    expect(failures[0]!.occurred_at).toBeGreaterThanOrEqual(before);
    expect(failures[0]!.occurred_at).toBeLessThanOrEqual(after);
  });
});
