import { describe, expect, it } from 'vitest';
import { reportBlocks } from '../../cli/commands/check.ts';
import { renderMarkdown } from '../../cli/format/render.ts';
import type { ConsistencyReport, VersionNumbers } from '../../sinks/clickhouse/index.ts';

/**
 * A trial found `passk check` saying "96 graded trials, 75.0%" where report --from-store, compare and the dashboard
 * said 66.7% over 72: check counts confirmation attempts too (its three sources all hold them). Its numbers are
 * labelled as counting every attempt, and it says the headline numbers leave confirmation runs out.
 */
describe('passk check labels its numbers as counting every attempt', () => {
  it('the headers say all attempts, and a note names confirmation runs and the headline numbers', () => {
    const n = {
      rows: 24,
      rows_without_graded: 0,
      trials: 96,
      passes: 72,
      ungraded: 0,
      mean_accuracy: 0.75,
    } as unknown as VersionNumbers;
    const report: ConsistencyReport = {
      rows: 24,
      differences: [],
      checked: [
        { suite: 's', dataset_version: 'd1', agent_version: 'v1', from_trials: n, from_row_state: n, ok: true },
      ],
      versions: [],
      summaries: false,
      ok: true,
    };
    const md = renderMarkdown(reportBlocks(report, 'the store'));
    expect(md).toContain('accuracy, all attempts');
    expect(md).toContain('graded attempts, all runs');
    expect(md).not.toMatch(/\| mean accuracy \|/);
    expect(md).toContain('confirmation runs (confirm-…) included');
    expect(md).toContain('leave confirmation runs out of their headline numbers');
    expect(md).toContain('75.0%');
  });
});
