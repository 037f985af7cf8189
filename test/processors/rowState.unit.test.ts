import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCodec } from '../../schemas/codec.ts';
import { RowStateChanged } from '../../schemas/events/decisions.ts';
import { arbTrialStream, T0, trial } from '../helpers/processorFixtures.ts';
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import {
  changelogEventId,
  conflictReason,
  evolveRow,
  slotConflict,
  fromRowStateChanged,
  toRowStateChanged,
  type StreamRowState,
} from '../../processors/folds/rowState.ts';
import { hashString } from '../../processors/core/hash.ts';
import { rowStateKey } from '../../schemas/topics.ts';
import {
  checkpointOf,
  foldTrials,
  type FoldOutcome,
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
    const s1 = given.reduce<StreamRowState | undefined>((s, t) => evolveRow(s, t), undefined)!;
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

  it('keeps the first answer of a (run, attempt) slot: a later one, whatever its id, is a conflict, never folded', () => {
    const early = trial({ row: 'r1', version: 'v1', attempt: 1, passed: true, id: '01KBBBBBBBBBBBBBBBBBBBBBBB' });
    const rival = trial({ row: 'r1', version: 'v1', attempt: 1, passed: false, id: '01KAAAAAAAAAAAAAAAAAAAAAAA' });
    const s = evolveRow(undefined, early);
    expect(evolveRow(s, rival)).toBe(s); // a smaller event id no longer takes the slot
    expect(slotConflict(s.attempts, toAttemptRecord(rival))).toMatchObject({ field: 'passed' });
    // the same answer under another event id is a second answer all the same: the reason names the id
    const twin = { ...early, event_id: rival.event_id };
    expect(slotConflict(s.attempts, toAttemptRecord(twin))).toMatchObject({ field: 'event_id' });
    // the same event id with another verdict (a re-send after an ingest restart) is a conflict too
    const again = { ...early, passed: false };
    expect(evolveRow(s, again)).toBe(s);
    expect(slotConflict(s.attempts, toAttemptRecord(again))).toMatchObject({ field: 'passed' });
    // the same answer re-sent later (another event time) is a duplicate, not a conflict
    expect(slotConflict(s.attempts, toAttemptRecord({ ...early, occurred_at: early.occurred_at + 9 }))).toBeUndefined();
    const table: RowTable = new Map();
    const outcome: FoldOutcome = { folded: [], conflicts: [] };
    foldTrials(table, [early, early, again, rival], {}, outcome);
    expect(outcome.folded).toEqual([early]);
    expect(outcome.conflicts.map((c) => [c.index, c.conflict.field])).toEqual([
      [2, 'passed'],
      [3, 'passed'],
    ]);
    expect(conflictReason(rival, outcome.conflicts[1]!.conflict)).toContain(
      `was folded as event ${early.event_id}; this one, event ${rival.event_id}, differs in passed`,
    );
    expect([...table.values()][0]).toMatchObject({ n: 1, c: 1, seq: 1 });
  });

  it("keeps attempts in the core's canonical order (event time, run, attempt), whatever the arrival order", () => {
    const s = [3, 1, 2].reduce<StreamRowState | undefined>(
      (st, a) => evolveRow(st, trial({ row: 'r', version: 'v', attempt: a, passed: true })),
      undefined,
    )!;
    expect(s.attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    // event time first: attempt 0 of a later run that was recorded earlier comes first
    const late = trial({ row: 'r', version: 'v', run: 'run-1', attempt: 0, passed: true, at: T0 + 5000 });
    const early = trial({ row: 'r', version: 'v', run: 'run-2', attempt: 1, passed: false, at: T0 + 1000 });
    for (const order of [
      [late, early],
      [early, late],
    ])
      expect(
        order.reduce<StreamRowState | undefined>((st, t) => evolveRow(st, t), undefined)!.attempts.map((a) => a.run_id),
      ).toEqual(['run-2', 'run-1']);
  });

  it('keeps an output hash, the check answers in order and the event time per attempt (the core attempt record)', () => {
    const t = trial({
      row: 'r',
      version: 'v',
      attempt: 0,
      passed: false,
      output: 'deny',
      checks: [
        { name: 'window', answer: true },
        { name: 'amount', answer: 12 },
        { name: 'window', answer: false },
      ],
    });
    const s = evolveRow(undefined, t);
    expect(s.attempts).toEqual([toAttemptRecord(t)]);
    expect(s.attempts[0]).toMatchObject({
      occurred_at: t.occurred_at,
      checks: [
        { name: 'window', answer: true },
        { name: 'amount', answer: 12 },
        { name: 'window', answer: false },
      ],
      forbidden_actions: [],
    });
    expect(typeof s.attempts[0]!.output_hash).toBe('string');
    expect(s.attempts[0]!.output_hash).not.toBe('deny');
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

/**
 * A changelog record as passk wrote it before schema version 2 (what an older passk left in passk.rowstate):
 * attempts in slot order (attempt, run), checks as a record by name, output hash as `output`, empty fields absent.
 */
const asVersion1 = (e: RowStateChanged): unknown => {
  const { attempt_records, ...rest } = e;
  return {
    ...rest,
    schema_version: 1,
    attempts: [...attempt_records]
      .sort((a, b) => a.attempt - b.attempt || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0))
      .map((a) => ({
        attempt: a.attempt,
        run_id: a.run_id,
        event_id: a.event_id,
        passed: a.passed,
        ...(a.output_hash === null ? {} : { output: a.output_hash }),
        ...(a.checks.length ? { checks: Object.fromEntries(a.checks.map((ch) => [ch.name, ch.answer])) } : {}),
        ...(a.forbidden_actions.length ? { forbidden_actions: a.forbidden_actions } : {}),
      })),
  };
};
const decode = async (value: unknown): Promise<RowStateChanged> => {
  const e = await jsonCodec.decode(new TextEncoder().encode(JSON.stringify(value)));
  if (e.type !== 'RowStateChanged') throw new Error(`decoded a ${e.type}`);
  return e;
};

describe('changelog records of schema version 1 (before the one attempt record)', () => {
  it('decode into attempt records: event time from the event id, checks in order, restored in canonical order', async () => {
    const trials = [
      trial({ row: 'r', version: 'v', run: 'run-b', attempt: 0, passed: true, output: 'x', at: T0 + 9000 }),
      trial({ row: 'r', version: 'v', run: 'run-a', attempt: 1, passed: null, at: T0 + 1000 }),
      trial({
        row: 'r',
        version: 'v',
        run: 'run-a',
        attempt: 0,
        passed: false,
        checks: [
          { name: 'window', answer: 30 },
          { name: 'amount', answer: 'full' },
        ],
      }),
    ];
    const state = trials.reduce<StreamRowState | undefined>((st, t) => evolveRow(st, t), undefined)!;
    const old = asVersion1(toRowStateChanged(state, 'old'));
    expect(JSON.stringify(old)).not.toContain('attempt_records');
    const record = await decode(old);
    // decoded as written (slot order), each attempt's time from its event id
    expect(record.attempt_records.map((a) => a.run_id + '/' + a.attempt)).toEqual(['run-a/0', 'run-b/0', 'run-a/1']);
    expect(record.attempt_records.map((a) => a.occurred_at)).toEqual([T0, T0 + 9000, T0 + 1000]);
    expect(record.attempt_records[0]!.checks).toEqual([
      { name: 'window', answer: 30 },
      { name: 'amount', answer: 'full' },
    ]);
    // restored in the canonical order: the state the fold has
    expect(fromRowStateChanged(record).attempts.map((a) => a.run_id + '/' + a.attempt)).toEqual([
      'run-a/0',
      'run-a/1',
      'run-b/0',
    ]);
    expect(JSON.stringify(fromRowStateChanged(record))).toBe(JSON.stringify(state));
  });

  it('a record with neither or both attempt lists is refused, naming the field', async () => {
    const state = evolveRow(undefined, trial({ row: 'r', version: 'v', attempt: 0, passed: true }));
    const record = toRowStateChanged(state, 'p');
    const { attempt_records: _dropped, ...neither } = record;
    const both = { ...record, attempts: (asVersion1(record) as { attempts: unknown[] }).attempts };
    for (const bad of [neither, both])
      await expect(decode(bad)).rejects.toThrow(/schema: attempt_records: exactly one of attempt_records/);
  });

  it('restoring from version 1 records = one straight replay, for any split point', async () => {
    await fc.assert(
      fc.asyncProperty(arbTrialStream, fc.nat(), async ({ stream }, cut) => {
        const i = cut % (stream.length + 1);
        const head: RowTable = new Map();
        const changelog = foldTrials(head, stream.slice(0, i)).map((c) => asVersion1(toRowStateChanged(c.after, 'p')));
        const restored = restoreTable((await Promise.all(changelog.map(decode))).map(fromRowStateChanged));
        expect(bytes(fold(stream.slice(i), restored))).toBe(bytes(fold(stream)));
      }),
    );
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

  it('counts each (run, attempt) once per row, the first arrival answering; every other answer is a conflict', () => {
    fc.assert(
      fc.property(arbTrialStream, ({ pool }) => {
        const outcome: FoldOutcome = { folded: [], conflicts: [] };
        const table: RowTable = new Map();
        foldTrials(table, pool, {}, outcome);
        const slotOf = (t: { row_id: string; agent: { version: string }; run_id: string; attempt: number }) =>
          `${t.row_id}/${t.agent.version}/${t.run_id}/${t.attempt}`;
        const firstOf = new Map<string, string>();
        for (const t of pool) if (!firstOf.has(slotOf(t))) firstOf.set(slotOf(t), t.event_id);
        for (const row of table.values()) {
          const slots = new Set(row.attempts.map((a) => `${a.run_id}/${a.attempt}`));
          expect(slots.size).toBe(row.attempts.length);
          expect(row.n + row.ungraded).toBe(row.attempts.length);
          for (const a of row.attempts)
            expect(a.event_id).toBe(firstOf.get(`${row.row_id}/${row.agent_version}/${a.run_id}/${a.attempt}`));
        }
        // folded, duplicates of a folded event, and conflicts: every trial is exactly one of them
        expect(outcome.folded.map((t) => t.event_id)).toEqual([...firstOf.values()]);
        for (const c of outcome.conflicts) expect(c.trial.event_id).not.toBe(firstOf.get(slotOf(c.trial)));
        const folded = new Set(outcome.folded.map((t) => t.event_id));
        const refused = new Set(outcome.conflicts.map((c) => c.index));
        pool.forEach((t, i) => expect(folded.has(t.event_id) !== refused.has(i)).toBe(true));
      }),
    );
  });
});

it('fixture times are event times', () =>
  expect(trial({ row: 'r', version: 'v', attempt: 2, passed: true }).occurred_at).toBe(T0 + 2000));

describe('changelog event ids', () => {
  // the id as it was first defined (hashString in base 36, parsed back; base32 by array): ids already in a
  // changelog must not change, or a replay would not re-emit the same bytes
  const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const base32 = (value: number, chars: number): string => {
    const out = new Array<string>(chars);
    for (let i = chars - 1, v = value; i >= 0; i--, v = Math.floor(v / 32)) out[i] = CROCKFORD[v % 32]!;
    return out.join('');
  };
  const reference = (s: StreamRowState) =>
    base32(s.occurred_at, 10) + base32(parseInt(hashString(rowStateKey(s)), 36), 11) + base32(s.seq % 2 ** 25, 5);

  it('are the ids of the first definition, with the key passed or not, cached or not', () => {
    fc.assert(
      fc.property(
        fc.record({ suite: fc.string(), dv: fc.string(), av: fc.string(), row: fc.string() }),
        fc.integer({ min: 0, max: 2 ** 48 - 1 }),
        fc.nat(),
        ({ suite, dv, av, row }, at, seq) => {
          const s = evolveRow(
            undefined,
            trial({ suite, dataset_version: dv, version: av, row, attempt: 0, passed: true, at }),
          );
          const state = { ...s, seq };
          const want = reference(state);
          expect(toRowStateChanged(state, 'p').event_id).toBe(want);
          expect(toRowStateChanged(state, 'p', rowStateKey(state)).event_id).toBe(want);
          expect(changelogEventId(state)).toBe(want); // now from the cache
        },
      ),
    );
  });
});
