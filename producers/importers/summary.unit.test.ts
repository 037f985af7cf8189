import { describe, expect, it } from 'vitest';
import { summarize, type TrialOutcome } from './summary.ts';

const trials = (rows: Record<string, (boolean | null)[]>): TrialOutcome[] =>
  Object.entries(rows).flatMap(([row_id, verdicts]) =>
    verdicts.map((passed) => ({ suite: 's', agent: { version: 'v1' }, row_id, passed })),
  );

describe('the import summary', () => {
  it('reports pass^k up to the attempts each row was given, each k over the rows with k graded attempts', () => {
    // epochs: 3, one unscored epoch on row b (Inspect reports pass^3 over the samples that have 3)
    const [s] = summarize(trials({ a: [true, true, true], b: [true, false, null], c: [false, true, false] }));
    expect(s!.attempts).toBe(3);
    expect(s!.rowsAtK).toEqual([3, 3, 2]);
    // by hand: pass^1 = (1 + 1/2 + 1/3) / 3; pass^2 = (1 + 0 + 0) / 3; pass^3 = (1 + 0) / 2 (b has 2 graded)
    expect(s!.passHat[0]).toBeCloseTo(11 / 18, 14);
    expect(s!.passHat[1]).toBeCloseTo(1 / 3, 14);
    expect(s!.passHat[2]).toBeCloseTo(1 / 2, 14);
  });

  it('stops the curve where no row has k graded attempts, and uses the fewest attempts recorded', () => {
    const [s] = summarize(trials({ a: [true, null, true], b: [false, true, null], c: [true, true] }));
    expect(s!.attempts).toBe(2);
    expect(s!.rowsAtK).toEqual([3, 3]);
    const [t] = summarize(trials({ a: [true, null], b: [null, false] }));
    expect(t).toMatchObject({ attempts: 2, rowsAtK: [2], passHat: [0.5] });
  });

  it('has no curve when nothing is graded', () => {
    const [s] = summarize(trials({ a: [null, null] }));
    expect(s).toMatchObject({ attempts: 0, rowsAtK: [], passHat: [] });
  });
});
