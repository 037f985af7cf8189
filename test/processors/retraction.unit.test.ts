import { describe, expect, it } from 'vitest';
import { foldTrials, foldTrialsOwned, type RowTable } from '../../processors/folds/rowTable.ts';
import { applyRowChanges, type VersionSummaries } from '../../processors/folds/versionSummary.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { trial } from '../helpers/events.ts';

/** RunRetracted in the trial fold: the run's attempts leave their rows, by both folds, and later ones never count. */
const T0 = Date.UTC(2025, 0, 1);
const retraction = (row_id: string, run_id: string, at = T0 + 1_000): RunRetracted => ({
  event_id: deterministicEventId(at, 'RunRetracted', run_id, row_id),
  type: 'RunRetracted',
  schema_version: 1,
  occurred_at: at,
  producer: 'passk-test/0',
  retraction_id: 'x',
  run_id,
  suite: 'refunds',
  dataset_version: 'v1',
  agent_version: 'agent-1.0.0',
  row_id,
  reason: 'typo',
  retracted_by: 'ana',
  trials: 2,
});

const good = [0, 1, 2].map((i) => trial({ seq: 100 + i, row_id: 'r1', run_id: 'good', attempt: i, passed: true }));
const bad = [0, 1].map((i) => trial({ seq: 200 + i, row_id: 'r1', run_id: 'bad', attempt: i, passed: false }));
const late = trial({ seq: 300, row_id: 'r1', run_id: 'bad', attempt: 2, passed: false });

describe('a retraction in the trial fold', () => {
  it("takes the run's attempts out of the row, and a later trial of the run is not counted", () => {
    for (const fold of [foldTrials, foldTrialsOwned]) {
      const table: RowTable = new Map();
      fold(table, [...good, ...bad]);
      const [row] = [...table.values()];
      expect([row!.n, row!.c, row!.class]).toEqual([5, 3, 'flip']);
      const changes = fold(table, [retraction('r1', 'bad'), late]);
      expect(changes).toHaveLength(1);
      const after = [...table.values()][0]!;
      expect([after.n, after.c, after.class, after.retracted_runs]).toEqual([3, 3, 'stable_correct', ['bad']]);
      expect(after.attempts.map((a) => a.run_id)).toEqual(['good', 'good', 'good']);
      expect(after.seq).toBe(6);
      // retracting it again changes nothing
      expect(fold(table, [retraction('r1', 'bad', T0 + 2_000)])).toEqual([]);
    }
  });

  it('leaves the version summary as if the run never was; a row left empty is no row', () => {
    const table: RowTable = new Map();
    const sums: VersionSummaries = new Map();
    applyRowChanges(sums, foldTrials(table, good));
    const without = JSON.stringify([...sums.values()]);
    const other = trial({ seq: 400, row_id: 'r2', run_id: 'bad', attempt: 0, passed: false });
    applyRowChanges(sums, foldTrials(table, [...bad, other]));
    expect([...sums.values()][0]).toMatchObject({ rows: 2, trials: 6, passes: 3 });
    applyRowChanges(sums, foldTrials(table, [retraction('r1', 'bad'), retraction('r2', 'bad')]));
    expect(JSON.stringify([...sums.values()])).toBe(without);
    expect(table.get([...table.keys()].find((k) => k.endsWith('r2'))!)).toMatchObject({ n: 0, ungraded: 0 });
  });

  it('a retraction that arrives before any trial of its row keeps the run out of it', () => {
    const table: RowTable = new Map();
    foldTrials(table, [retraction('r1', 'bad'), ...bad, ...good]);
    const row = [...table.values()][0]!;
    expect([row.n, row.c, row.retracted_runs]).toEqual([3, 3, ['bad']]);
  });
});
