import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay } from './fold.ts';
import { groupTrials } from './groups.ts';
import { RowState, rowState } from './rowState.ts';
import { summarizeRow } from './rowSummary.ts';
import { trial } from './trials.testkit.ts';

const verdict = fc.constantFrom<boolean | null>(true, false, null);
const attempts = fc.array(
  fc.record({ passed: verdict, output: fc.constantFrom('approve', 'deny'), window: fc.boolean() }),
  { minLength: 1, maxLength: 10 },
);
const events = (xs: { passed: boolean | null; output: string; window: boolean }[]) =>
  xs.map((x, i) =>
    trial({
      row: 'r',
      version: 'v',
      attempt: i,
      at: 1_000 + i,
      passed: x.passed,
      output: x.output,
      checks: { window: x.window },
      tags: i === 0 ? ['must_not_break'] : [],
    }),
  );

describe('row state fold', () => {
  it('gives the same state for any arrival order and any redelivery', () => {
    fc.assert(
      fc.property(attempts, fc.infiniteStream(fc.nat()), fc.array(fc.nat(), { maxLength: 5 }), (xs, keys, dupes) => {
        const es = events(xs);
        const k = [...keys.take(es.length)];
        const shuffled = es
          .map((e, i) => [k[i]!, e] as const)
          .sort((a, b) => a[0] - b[0])
          .map(([, e]) => e);
        const withDupes = [...shuffled, ...dupes.map((d) => es[d % es.length]!)];
        expect(replay(rowState, withDupes)).toEqual(replay(rowState, es));
      }),
    );
  });

  it('counts graded attempts, passes and ungraded like a direct count (brute force)', () => {
    fc.assert(
      fc.property(attempts, fc.boolean(), (xs, asFailure) => {
        const s = summarizeRow('r', replay(rowState, events(xs)), { ungradedAsFailure: asFailure, minAttempts: 3 });
        const graded = xs.filter((x) => x.passed !== null || asFailure);
        expect(s.n).toBe(graded.length);
        expect(s.c).toBe(xs.filter((x) => x.passed === true).length);
        expect(s.ungraded).toBe(xs.filter((x) => x.passed === null).length);
      }),
    );
  });

  it('checkpoint, restore through the schema, continue = one straight replay', () => {
    fc.assert(
      fc.property(attempts, fc.nat(), (xs, cut) => {
        const es = events(xs);
        const i = cut % (es.length + 1);
        const saved = RowState.parse(JSON.parse(JSON.stringify(replay(rowState, es.slice(0, i)))));
        expect(replay(rowState, es.slice(i), saved)).toEqual(replay(rowState, es));
      }),
    );
  });

  it('keeps one attempt per (run, attempt): the first folded, as the processors keep the first in log order', () => {
    const small = { ...trial({ row: 'r', version: 'v', passed: true }), event_id: '01KAAAAAAAAAAAAAAAAAAAAAAA' };
    const large = { ...trial({ row: 'r', version: 'v', passed: false }), event_id: '01KBBBBBBBBBBBBBBBBBBBBBBB' };
    const slot = (s: RowState) => s.attempts.map((x) => [x.event_id, x.passed]);
    expect(slot(replay(rowState, [small, large]))).toEqual([[small.event_id, true]]);
    // a smaller event id that comes second does not take the slot (it did: the report and the processors split)
    expect(slot(replay(rowState, [large, small]))).toEqual([[large.event_id, false]]);
  });

  it('keeps a hash of the output, not the output, and the tags as a sorted set', () => {
    const s = replay(rowState, [
      trial({ row: 'r', version: 'v', passed: true, output: 'approve', tags: ['b', 'a'] }),
      trial({ row: 'r', version: 'v', attempt: 1, passed: true, output: 'approve', tags: ['a'] }),
    ]);
    expect(s.tags).toEqual(['a', 'b']);
    expect(s.attempts[0]!.output_hash).toBe(s.attempts[1]!.output_hash);
    expect(s.attempts[0]!.output_hash).not.toContain('approve');
  });

  it('groups rows by suite, dataset version and agent version', () => {
    const groups = groupTrials([
      trial({ row: 'r1', version: 'v2', passed: true }),
      trial({ row: 'r1', version: 'v1', passed: true }),
      trial({ row: 'r1', version: 'v1', passed: true, dataset: 'ds-2' }),
      trial({ row: 'r2', version: 'v1', passed: false }),
    ]);
    expect(groups.map((g) => [g.key.dataset_version, g.key.agent_version, g.rows.size])).toEqual([
      ['ds-1', 'v1', 2],
      ['ds-1', 'v2', 1],
      ['ds-2', 'v1', 1],
    ]);
  });
});
