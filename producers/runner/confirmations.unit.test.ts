import { describe, expect, it } from 'vitest';
import type { ConfirmationRequested } from '../../schemas/events/comparisons.ts';
import { mismatch, topUp } from './confirmations.ts';
import { attemptKey, plannedAttempts } from './runTrials.ts';

describe('confirmation requests', () => {
  it('tops a row up by one attempt per ungraded one, so it reaches the requested graded attempts', () => {
    const recorded = new Map<string, boolean | null>([
      [attemptKey('a', 0), true],
      [attemptKey('a', 1), null],
      [attemptKey('a', 2), null], // the replacement of attempt 1 was ungraded too
      [attemptKey('b', 0), false],
      [attemptKey('b', 1), true],
    ]);
    const more = topUp(['a', 'b', 'c'], 2, recorded, attemptKey);
    expect([...more]).toEqual([['a', 2]]);
    const rows = ['a', 'b', 'c'].map((id) => ({ id, input: id }));
    const todo = plannedAttempts({ rows, k: 2, moreAttempts: more }).filter(
      ({ row, attempt }) => !recorded.has(attemptKey(row.id, attempt)),
    );
    // a: one more (attempt 3) gives 2 graded; b is done; c has not started
    expect(todo.map(({ row, attempt }) => `${row.id}${attempt}`)).toEqual(['a3', 'c0', 'c1']);
  });

  it('names the flag that would match a request for another suite or dataset version', () => {
    const r = { suite: 's', dataset_version: 'v1' } as ConfirmationRequested;
    expect(mismatch(r, { suite: 's', datasetVersion: 'v1', agentVersion: 'a' })).toBeUndefined();
    expect(mismatch(r, { suite: 't', datasetVersion: 'v1', agentVersion: 'a' })).toBe(
      'suite s, not t (pass --suite s)',
    );
    expect(mismatch(r, { suite: 's', datasetVersion: 'v2', agentVersion: 'a' })).toBe(
      'dataset version v1, not v2 (pass --dataset-version v1)',
    );
  });
});
