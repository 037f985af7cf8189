import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RowStateChanged } from '../../schemas/events/decisions.ts';
import { arbTrialStream, T0, trial } from '../helpers/processorFixtures.ts';
import { evolveRow, fromRowStateChanged, toRowStateChanged, type RowState } from '../../processors/folds/rowState.ts';
import {
  checkpointOf,
  foldTrials,
  restoreTable,
  RowTableCheckpoint,
  type RowTable,
} from '../../processors/folds/rowTable.ts';

const fold = (trials: Parameters<typeof foldTrials>[1], from?: RowTable): RowTable => {
  const table: RowTable = from ?? new Map();
  foldTrials(table, trials);
  return table;
};
const bytes = (t: RowTable): string => JSON.stringify(checkpointOf(t));
/** What must not depend on arrival order: everything but the change counter and its time. */
const content = (t: RowTable) => checkpointOf(t).map(({ seq: _s, occurred_at: _o, ...rest }) => rest);

describe('row state fold', () => {
  it('counts graded attempts, keeps ungraded apart, and classifies at three', () => {
    const given = [
      trial({ row: 'r1', version: 'v1', attempt: 1, passed: true }),
      trial({ row: 'r1', version: 'v1', attempt: 2, passed: null }),
    ];
    const s1 = given.reduce<RowState | undefined>((s, t) => evolveRow(s, t), undefined)!;
    expect(s1).toMatchObject({ n: 1, c: 1, ungraded: 1, class: 'unclassified', seq: 2 });
    const s2 = [2, 3].reduce(
      (s, a) => evolveRow(s, trial({ row: 'r1', version: 'v1', attempt: a + 1, passed: a === 2 })),
      s1,
    );
    expect(s2).toMatchObject({ n: 3, c: 2, class: 'flip', seq: 4 });
  });

  it('ignores an event id seen before, returning the same state object', () => {
    const t = trial({ row: 'r1', version: 'v1', attempt: 1, passed: true });
    const s = evolveRow(undefined, t);
    expect(evolveRow(s, t)).toBe(s);
  });

  it('keeps one attempt per (run, attempt): the smaller event id, whichever came first', () => {
    const early = trial({ row: 'r1', version: 'v1', attempt: 1, passed: true, id: '01KAAAAAAAAAAAAAAAAAAAAAAA' });
    const late = trial({ row: 'r1', version: 'v1', attempt: 1, passed: false, id: '01KBBBBBBBBBBBBBBBBBBBBBBB' });
    const a = evolveRow(evolveRow(undefined, early), late);
    const b = evolveRow(evolveRow(undefined, late), early);
    expect(a.attempts).toEqual(b.attempts);
    expect(a).toMatchObject({ n: 1, c: 1, seq: 1 });
    expect(b).toMatchObject({ n: 1, c: 1, seq: 2 });
  });

  it('sorts attempts by attempt number then run, whatever the arrival order', () => {
    const s = [3, 1, 2].reduce<RowState | undefined>(
      (st, a) => evolveRow(st, trial({ row: 'r', version: 'v', attempt: a, passed: true })),
      undefined,
    )!;
    expect(s.attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
  });

  it('keeps an output hash and check answers per attempt', () => {
    const s = evolveRow(
      undefined,
      trial({
        row: 'r',
        version: 'v',
        attempt: 0,
        passed: false,
        output: 'deny',
        checks: [{ name: 'window', answer: true }],
      }),
    );
    expect(s.attempts[0]).toMatchObject({ checks: { window: true } });
    expect(typeof s.attempts[0]!.output).toBe('string');
    expect(s.attempts[0]!.output).not.toBe('deny');
  });

  it('round-trips through its changelog record, byte for byte', () => {
    const s = evolveRow(
      undefined,
      trial({ row: 'r', version: 'v', attempt: 0, passed: true, output: 'x', checks: [{ name: 'c', answer: 1 }] }),
    );
    const record = RowStateChanged.parse(JSON.parse(JSON.stringify(toRowStateChanged(s, 'test'))));
    expect(JSON.stringify(fromRowStateChanged(record))).toBe(JSON.stringify(s));
    expect(toRowStateChanged(s, 'test').event_id).toBe(toRowStateChanged(s, 'test').event_id);
  });
});

describe('row table properties', () => {
  it('checkpoint, restore, continue = one straight replay, for any split point', () => {
    fc.assert(
      fc.property(arbTrialStream, fc.nat(), ({ stream }, cut) => {
        const i = cut % (stream.length + 1);
        const saved = RowTableCheckpoint.parse(JSON.parse(JSON.stringify(checkpointOf(fold(stream.slice(0, i))))));
        expect(bytes(fold(stream.slice(i), restoreTable(saved)))).toBe(bytes(fold(stream)));
      }),
    );
  });

  it('restoring from the changelog records = one straight replay, for any split point', () => {
    fc.assert(
      fc.property(arbTrialStream, fc.nat(), ({ stream }, cut) => {
        const i = cut % (stream.length + 1);
        const head: RowTable = new Map();
        const changelog = foldTrials(head, stream.slice(0, i)).map((c) => toRowStateChanged(c.after, 'p'));
        const restored = restoreTable(
          changelog.map((e) => fromRowStateChanged(RowStateChanged.parse(JSON.parse(JSON.stringify(e))))),
        );
        expect(bytes(fold(stream.slice(i), restored))).toBe(bytes(fold(stream)));
      }),
    );
  });

  it('redelivering any suffix after a restore changes nothing (at-least-once + idempotent fold)', () => {
    fc.assert(
      fc.property(arbTrialStream, fc.nat(), ({ stream }, cut) => {
        const i = cut % (stream.length + 1);
        const straight = fold(stream);
        expect(bytes(fold(stream.slice(i), restoreTable(checkpointOf(straight))))).toBe(bytes(straight));
      }),
    );
  });

  it('the same set of trials in any order, any number of times, gives the same rows', () => {
    fc.assert(
      fc.property(arbTrialStream, fc.func(fc.integer()), ({ pool, stream }, rank) => {
        const shuffled = [...stream, ...pool]
          .map((t, i) => ({ t, r: rank(i) }))
          .sort((a, b) => a.r - b.r)
          .map((x) => x.t);
        expect(content(fold([...pool, ...shuffled]))).toEqual(content(fold(pool)));
      }),
    );
  });

  it('counts each (run, attempt) once per row, the first recorded event winning', () => {
    fc.assert(
      fc.property(arbTrialStream, ({ pool }) => {
        for (const row of fold(pool).values()) {
          const slots = new Set(row.attempts.map((a) => `${a.run_id}/${a.attempt}`));
          expect(slots.size).toBe(row.attempts.length);
          expect(row.n + row.ungraded).toBe(row.attempts.length);
          for (const a of row.attempts) {
            const rivals = pool.filter(
              (t) =>
                t.row_id === row.row_id &&
                t.agent.version === row.agent_version &&
                t.run_id === a.run_id &&
                t.attempt === a.attempt,
            );
            expect(a.event_id).toBe(rivals.map((t) => t.event_id).sort()[0]);
          }
        }
      }),
    );
  });
});

it('fixture times are event times', () =>
  expect(trial({ row: 'r', version: 'v', attempt: 2, passed: true }).occurred_at).toBe(T0 + 2000));
