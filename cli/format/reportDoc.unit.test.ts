import { describe, expect, it } from 'vitest';
import { groupTrials } from '../../processors/core/groups.ts';
import { buildReport, DEFAULT_REPORT_OPTIONS } from '../../processors/core/report.ts';
import { row } from '../../processors/core/trials.testkit.ts';
import { reportBlocks } from './reportDoc.ts';
import { renderTerminal } from './render.ts';

/**
 * An adaptive version that also has a fixed run on the same dataset version (the README's five commands, then its
 * adaptive walkthrough, in one data directory): its headline counts the first stage and the fixed run's attempts,
 * pass^5 of 3 + 2 a row. The report said "from each row's first 2 graded attempts" and "first 2 attempts disagree"
 * over a pass^5 it could not have had from them.
 */
describe('passk report of an adaptive version with other runs', () => {
  const adaptive = [...row('a', 'v', '++-+', { run: 'adaptive-x' }), ...row('b', 'v', '+-', { run: 'adaptive-x' })];
  const fixed = [
    ...row('a', 'v', '+++', { run: 'run-1', at: 100 }),
    ...row('b', 'v', '+++', { run: 'run-1', at: 100 }),
  ];
  const printed = (events: typeof adaptive) =>
    renderTerminal(
      reportBlocks(buildReport(groupTrials(events), { ...DEFAULT_REPORT_OPTIONS, headlineFirstStage: 2 }).groups),
      { width: 1000 },
    );

  it("says the other runs' attempts are counted beside the first stage, and not that the first 2 disagree", () => {
    const out = printed([...adaptive, ...fixed]);
    expect(out).toContain(
      "from each row's first 2 graded attempts (the unbiased first stage, docs/adaptive.md), with the 6 attempts of this version's other runs",
    );
    expect(out).toContain('pass^5');
    expect(out).toContain('attempts above disagree: 1 of 2 rows');
    expect(out).not.toContain('first 2 attempts disagree');
  });

  it('says the first stage alone when there is no other run', () => {
    const out = printed(adaptive);
    expect(out).toContain('first 2 attempts disagree: 1 of 2 rows');
    expect(out).not.toContain('other runs');
  });
});
