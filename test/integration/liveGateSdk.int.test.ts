import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { declareComparison, importFiles, openLog, waitForVerdict } from '../../index.ts';

/**
 * The live gate from the SDK, as `passk gate --declare --wait` drives it (both use producers/gate): declare a
 * comparison, let the real processors (embedded log) decide it, await their GateEvaluated.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-live-gate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const trials = (): string => {
  const lines: string[] = [];
  for (const v of ['v1', 'v2'])
    for (let row = 0; row < 3; row++)
      for (let a = 0; a < 3; a++)
        lines.push(
          JSON.stringify({
            suite: 'sdk',
            dataset_version: 'd1',
            row_id: `r${row}`,
            agent_version: v,
            run_id: `run-${v}`,
            attempt: a,
            passed: true,
            output: 'x',
            expected: 'x',
          }),
        );
  return `${lines.join('\n')}\n`;
};

describe('declareComparison and waitForVerdict (the SDK)', () => {
  it("declare once (again publishes nothing), and get the processors' verdict", async () => {
    const backend = { backend: 'embedded' as const, dataDir: join(dir, 'data') };
    const file = join(dir, 'trials.jsonl');
    writeFileSync(file, trials());
    const log = await openLog(backend);
    try {
      await importFiles([file], {}, { publisher: log.publisher });
      const input = { baseline: 'v1', candidate: 'v2', mustNotBreak: [], rules: {} };
      const first = await declareComparison(log, input);
      expect(first).toMatchObject({
        published: true,
        declared: { type: 'ComparisonDeclared', suite: 'sdk', dataset_version: 'd1', baseline: 'v1', candidate: 'v2' },
      });
      const again = await declareComparison(log, input);
      expect(again.published).toBe(false);
      expect(again.declared.event_id).toBe(first.declared.event_id);

      const id = first.declared.comparison_id;
      // nobody decides it yet: the wait runs out
      expect(await waitForVerdict(log, id, 300)).toBeUndefined();
      const run = await startProcessors(PasskConfig.parse(backend), { log, store: false, maxWaitMs: 1 });
      try {
        const verdict = await waitForVerdict(log, id, 120_000);
        expect(verdict).toMatchObject({ type: 'GateEvaluated', gate_id: id, verdict: 'pass' });
        expect(verdict).toMatchObject({ suite: 'sdk', dataset_version: 'd1', baseline: 'v1', candidate: 'v2' });
        // declared after the verdict: the verdict comes back at once, with nothing published
        const decided = await declareComparison(log, input);
        expect(decided).toMatchObject({ published: false, verdict: { event_id: verdict!.event_id } });
      } finally {
        run.stop();
        await run.done;
      }
    } finally {
      await log.close();
    }
  }, 180_000);
});
