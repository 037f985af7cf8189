import { describe, expect, it } from 'vitest';
// @ts-expect-error: the dashboard's plain browser module has no types
import { screeningLine } from './client/screening.js';

/**
 * Issue 32, item 4 (docs/adaptive.md): the Compare view names an adaptive version's first stage (its run's
 * --first-k, as its rounds record it) instead of a plan of attempts per row the run did not have.
 */
const cmp = (first_stage: { baseline: number | null; candidate: number | null }) => ({
  rows: { paired: 24 },
  screen_attempts: { baseline: 3, candidate: 8 },
  first_stage,
});

describe("the Compare view's screening line", () => {
  it('gives the attempts per row of fixed-k versions', () => {
    expect(screeningLine(cmp({ baseline: null, candidate: null }))).toBe(
      '24 rows paired · screening 3 / 8 attempts per row',
    );
  });

  it("names an adaptive candidate's first stage, not its attempts per row", () => {
    const line = screeningLine(cmp({ baseline: null, candidate: 4 })) as string;
    expect(line).toBe(
      "24 rows paired · the candidate is adaptive: headline numbers and paired Δ from each row's first 4 graded " +
        "attempts (the first stage), classes from all its attempts · the baseline's screening uses 3 attempts per row",
    );
    expect(line).not.toContain('3 / 8');
  });

  it('says so of both versions when both are adaptive', () => {
    expect(screeningLine(cmp({ baseline: 3, candidate: 3 }))).toBe(
      "24 rows paired · both versions are adaptive: headline numbers and paired Δ from each row's first 3 graded " +
        'attempts (the first stage), classes from all its attempts',
    );
  });

  it("says the first stage is assumed when the run's rounds could not be read (the default --first-k)", () => {
    const line = screeningLine({ ...cmp({ baseline: null, candidate: 2 }), first_stage_assumed: true }) as string;
    expect(line).toBe(
      "24 rows paired · the candidate is adaptive: headline numbers and paired Δ from each row's first 2 graded " +
        "attempts (the first stage, assumed: the runner's default --first-k, as the run's rounds could not be read " +
        "from the event log), classes from all its attempts · the baseline's screening uses 3 attempts per row",
    );
    // a first stage read from the rounds is stated, with no such word
    expect(screeningLine(cmp({ baseline: null, candidate: 2 }))).not.toContain('assumed');
  });
});
