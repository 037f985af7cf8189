import { describe, expect, it } from 'vitest';
import { foldTrialsOwned, type RowTable } from '../processors/folds/rowTable.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { chunks, syntheticTrials, tightChangelogFold, tightFold, tightFolder } from './processors.ts';

// The bench's plain baselines must do the job passk does, or their ratios mean nothing: the same rows, the same
// counts, one changelog record per row a batch changed. Checked on the bench's own events with redeliveries and
// rival claims to a slot mixed in (a later event id for a taken slot, which must lose).
const events = (): TrialRecorded[] => {
  const base = [...syntheticTrials({ events: 3_000, rows: 50, versions: 3 })];
  const out: TrialRecorded[] = [];
  base.forEach((e, i) => {
    out.push(e);
    if (i % 7 === 0) out.push(e); // a redelivery
    if (i % 11 === 0) out.push({ ...e, event_id: `${e.event_id.slice(0, 25)}Z`, passed: !e.passed }); // a rival
  });
  return out;
};

describe('the bench’s plain baselines do passk’s job', () => {
  const all = events();
  const batches = chunks(all, 250);
  const table: RowTable = new Map();
  const changedPerBatch = batches.map((b) => foldTrialsOwned(table, b));

  it('the tight fold keeps passk’s rows with passk’s counts, batch by batch or all at once', () => {
    const { fold, table: tight } = tightFolder();
    let rows = 0;
    for (const b of batches) rows = fold(b);
    expect(rows).toBe(table.size);
    expect(tightFold(all)).toBe(table.size);
    const counts = (m: ReadonlyMap<string, { n: number; c: number; ungraded: number }>) =>
      [...m].map(([k, r]) => [k, r.n, r.c, r.ungraded]).sort();
    expect(counts(tight)).toEqual(counts(table));
  });

  it('the tight changelog fold emits one record per row each batch changed, with passk’s counts', () => {
    const fold = tightChangelogFold();
    batches.forEach((b, i) => {
      const records = fold(b);
      const passk = changedPerBatch[i]!;
      expect(records.map((r) => r.key)).toEqual(passk.map((c) => c.key));
      expect(records.map((r) => [r.n, r.c, r.ungraded, r.attempt_records.length])).toEqual(
        passk.map((c) => [c.after.n, c.after.c, c.after.ungraded, c.after.attempts.length]),
      );
      expect(records.map((r) => r.attempt_records.map((a) => a.event_id).sort())).toEqual(
        passk.map((c) => c.after.attempts.map((a) => a.event_id).sort()),
      );
    });
  });
});
