/**
 * One rule for "the same answer": the producers' slot memory (the SDK's recorder, ingest) and the processors' fold
 * name the same first differing field for a second answer of one attempt slot, in the order of `ANSWER_FIELDS`.
 * The producers' memory keeps digests, so what it holds per slot does not grow with the trial.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupTrials } from '../../processors/core/groups.ts';
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import { evolveRow, slotConflict } from '../../processors/folds/rowState.ts';
import { createSlotMemory, trialContent } from '../../producers/trialSlots.ts';
import { ANSWER_FIELDS, type TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { trial } from '../helpers/processorFixtures.ts';

const base = (): TrialRecorded => ({
  ...trial({ row: 'r1', version: 'v1', attempt: 1, passed: true, output: 'refund approved' }),
  checks: [{ name: 'policy', answer: 'yes' }],
  forbidden_actions: ['issue_refund'],
});

/** The trial with the chosen answer fields changed (each to another value of its type). */
const changed = (t: TrialRecorded, fields: readonly (typeof ANSWER_FIELDS)[number][]): TrialRecorded => {
  const u: TrialRecorded = { ...t };
  for (const f of fields)
    if (f === 'passed') u.passed = !t.passed;
    else if (f === 'output') u.output = `${t.output ?? ''} (again)`;
    else if (f === 'checks') u.checks = [{ name: 'policy', answer: 'no' }];
    else u.forbidden_actions = [];
  return u;
};

describe('the same answer, as producers and processors see it', () => {
  it('names the same first differing field for any second answer of a slot', () => {
    fc.assert(
      fc.property(fc.subarray([...ANSWER_FIELDS], { minLength: 1 }), fc.boolean(), (fields, otherId) => {
        const first = base();
        const second = { ...changed(first, fields), ...(otherId ? { event_id: `${first.event_id}X` } : {}) };
        const memory = createSlotMemory(10);
        memory.note(first);
        const producers = memory.conflictOf(second);
        const folded = evolveRow(undefined, first);
        const processors = slotConflict(folded.attempts, toAttemptRecord(second));
        // the producers name the event id first when it differs; the processors name it after the content
        const want = otherId ? 'event_id' : ANSWER_FIELDS.find((f) => fields.includes(f));
        expect(producers?.field).toBe(want);
        expect(processors?.field).toBe(ANSWER_FIELDS.find((f) => fields.includes(f)));
      }),
    );
  });

  it('takes the same trial again as a duplicate, and refuses other content under the name content', () => {
    const memory = createSlotMemory(10);
    const t = base();
    memory.note(t);
    expect(memory.conflictOf({ ...t, occurred_at: t.occurred_at + 5_000 })).toBeUndefined();
    expect(memory.knows(t)).toBe(true);
    expect(memory.conflictOf({ ...t, cost_usd: 0.25 })).toMatchObject({ field: 'content', prior: t.event_id });
  });

  it('remembers a slot in the same few bytes whatever the size of its output', () => {
    const small = trialContent(base());
    const large = trialContent({ ...base(), output: 'x'.repeat(1 << 20) });
    expect(large.length).toBe(small.length);
    expect(small.length).toBeLessThan(80);
  });
});

/**
 * Issue 26, item 3: the offline fold (the report over files or over the in-memory log, `groupTrials`) and the
 * processors' fold keep the same answer of a slot: the first in order. The offline fold kept the smaller event id,
 * so a rival with a smaller id that came second took the slot in the report and not in the store.
 */
describe('the offline fold and the processors keep the same answer', () => {
  it('for any order of trials, rivals and redeliveries, both keep the first answer of each slot', () => {
    const draw = fc.record({
      id: fc.constantFrom('01A', '01B', '01C', '01D', '01E', '01F'),
      attempt: fc.nat({ max: 2 }),
      passed: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(draw, { minLength: 1, maxLength: 20 }), (draws) => {
        // one event per id (a redelivery is the same event); several ids may claim one slot with other verdicts
        const byId = new Map<string, TrialRecorded>();
        const log = draws.map((d) => {
          const t =
            byId.get(d.id) ?? trial({ id: d.id, row: 'r1', version: 'v1', attempt: d.attempt, passed: d.passed });
          byId.set(d.id, t);
          return t;
        });
        let stream: ReturnType<typeof evolveRow> | undefined;
        for (const t of log) stream = evolveRow(stream, t);
        const offline = groupTrials(log)[0]!.rows.get('r1')!;
        const answers = (xs: readonly { event_id: string; passed: boolean | null }[]) =>
          xs.map((a) => [a.event_id, a.passed]);
        expect(answers(offline.attempts)).toEqual(answers(stream!.attempts));
        // brute force: the first event of each slot in log order
        const first = new Map<number, TrialRecorded>();
        for (const t of log) if (!first.has(t.attempt)) first.set(t.attempt, t);
        expect(offline.attempts.map((a) => a.event_id).sort()).toEqual(
          [...first.values()].map((t) => t.event_id).sort(),
        );
      }),
      { numRuns: 500 },
    );
  });
});
