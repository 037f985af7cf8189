import { describe, expect, it } from 'vitest';
import { compareVersions, DEFAULT_REPORT_OPTIONS, groupTrials } from '../../processors/core/index.ts';
import { row } from '../../processors/core/trials.testkit.ts';
import { compareBlocks, SHOWN_SUSPECTS } from './compareDoc.ts';
import { renderMarkdown } from './render.ts';

// 300 rows stable-correct on v1; on v2 every one fails once (a suspected regression), and the last 3 are confirmed:
// both versions ran again on them, v1 passed and v2 failed again
const ROWS = 300;
const id = (i: number) => `r${String(i).padStart(3, '0')}`;
const trials = Array.from({ length: ROWS }, (_, i) => [
  ...row(id(i), 'v1', '+++'),
  ...row(id(i), 'v2', '+-+'),
  ...(i >= ROWS - 3
    ? [...row(id(i), 'v1', '+++', { run: 'confirm-1' }), ...row(id(i), 'v2', '---', { run: 'confirm-1' })]
    : []),
]).flat();
const [v1, v2] = groupTrials(trials);
const comparison = compareVersions(
  {
    suite: 'refunds',
    dataset_version: 'ds-1',
    baseline: { version: 'v1', rows: v1!.rows },
    candidate: { version: 'v2', rows: v2!.rows },
  },
  {
    ...DEFAULT_REPORT_OPTIONS,
    bootstrap: { reps: 50, seed: 1, confidence: 0.95 },
    screenAttempts: 3,
    confirmationRuns: [],
  },
);
const listed = (md: string) => [...md.matchAll(/^\| (r\d{3}) \|/gm)].map((m) => m[1]);

describe('compare’s document, with thousands of suspected regressions', () => {
  it(`lists the first ${SHOWN_SUSPECTS}, confirmed ones first, and counts the rest by outcome`, () => {
    expect(comparison.confirmation.rows).toHaveLength(ROWS);
    const md = renderMarkdown(compareBlocks(comparison));
    const shown = listed(md);
    expect(shown).toHaveLength(SHOWN_SUSPECTS);
    expect(shown.slice(0, 3)).toEqual([id(ROWS - 3), id(ROWS - 2), id(ROWS - 1)]);
    expect(md).toContain(
      `… and ${ROWS - SHOWN_SUSPECTS} more suspected regressions (${ROWS - SHOWN_SUSPECTS} unresolved)`,
    );
  });

  it('says "not run yet" for a suspect no confirmation run has reached, not "0/0 · 0/0 passed"', () => {
    const md = renderMarkdown(compareBlocks(comparison));
    const line = (r: string) => md.split('\n').find((l) => l.startsWith(`| ${r} |`)) ?? '';
    expect(line(id(0))).toContain('| not run yet |');
    expect(md).not.toContain('0/0 · 0/0');
    expect(line(id(ROWS - 1))).toContain('| 3/3 · 0/3 passed |');
  });

  it('lists every one with --all', () => {
    const md = renderMarkdown(compareBlocks(comparison, { all: true }));
    expect(listed(md)).toEqual(comparison.confirmation.rows.map((s) => s.row_id));
    expect(md).not.toContain('more suspected regressions');
  });
});

describe('compare’s headline', () => {
  it('gives every number its paired Δ and interval, mean accuracy and flip rate included', () => {
    const md = renderMarkdown(compareBlocks(comparison));
    const line = (metric: string) => md.split('\n').find((l) => l.startsWith(`| ${metric} |`)) ?? '';
    // screening only (3 attempts): v1 passes 3 of 3 on every row, v2 2 of 3; every v2 row flips, no v1 row does
    expect(line('mean accuracy')).toBe('| mean accuracy | 100.0% | 66.7% | −33.3 pts | −33.3 pts … −33.3 pts |');
    expect(line('flip rate')).toBe('| flip rate | 0.0% | 100.0% | +100.0 pts | +100.0 pts … +100.0 pts |');
  });
});

describe('compare’s screening line, on a version with an adaptive run', () => {
  // v2's adaptive run stopped a row at 3 agreeing attempts, or at 2 when they differed (a flip): most rows got 3
  const adaptive = Array.from({ length: 6 }, (_, i) => [
    ...row(id(i), 'v1', '+++'),
    ...row(id(i), 'v2', i < 4 ? '+++' : '+-', { run: 'adaptive-1' }),
  ]).flat();
  const [b, c] = groupTrials(adaptive);
  const compare = (headlineFirstStage?: number) =>
    compareVersions(
      {
        suite: 'refunds',
        dataset_version: 'ds-1',
        baseline: { version: 'v1', rows: b!.rows },
        candidate: { version: 'v2', rows: c!.rows },
      },
      {
        ...DEFAULT_REPORT_OPTIONS,
        bootstrap: { reps: 20, seed: 1, confidence: 0.95 },
        confirmationRuns: [],
        ...(headlineFirstStage === undefined ? {} : { headlineFirstStage }),
      },
    );

  it('names the first stage behind the headline numbers, not a plan of attempts the run did not have', () => {
    const cmp = compare();
    expect(cmp.first_stage).toEqual({ baseline: null, candidate: 2 });
    const md = renderMarkdown(compareBlocks(cmp, { stageFrom: 'the default' })).replace(/\s+/g, ' ');
    expect(md).not.toMatch(/screening uses \d+ \/ \d+ attempts per row/);
    expect(md).toContain(
      "the candidate is adaptive: screening classes a row from all its adaptive attempts (as many as the stopping rule gave it), the headline numbers and paired Δ come from each row's first 2 graded attempts (the first stage, the default); the baseline's screening uses 3 attempts per row",
    );
    expect(renderMarkdown(compareBlocks(compare(3)))).toContain("each row's first 3 graded attempts (the first stage)");
  });

  it('keeps the planned attempts of two fixed-k versions', () => {
    expect(comparison.first_stage).toEqual({ baseline: null, candidate: null });
    expect(renderMarkdown(compareBlocks(comparison))).toContain(
      'screening uses 3 / 3 attempts per row (baseline / candidate)',
    );
  });
});

describe('compare’s first divergent check', () => {
  it('is named as the demo and the dashboard name it: "proof_of_purchase (check 2)"', () => {
    const [first, ...rest] = comparison.confirmation.rows;
    const withDivergence = {
      ...comparison,
      confirmation: {
        ...comparison.confirmation,
        rows: [
          {
            ...first!,
            outcome: 'confirmed_regression' as const,
            first_divergence: {
              check: 'proof_of_purchase',
              position: 2,
              baseline: [{ answer: false, count: 9 }],
              candidate: [{ answer: true, count: 9 }],
            },
          },
          ...rest,
        ],
      },
    };
    const md = renderMarkdown(compareBlocks(withDivergence));
    expect(md).toContain('proof_of_purchase (check 2): false×9 → true×9');
    expect(md).not.toContain('#2 proof_of_purchase');
  });
});
