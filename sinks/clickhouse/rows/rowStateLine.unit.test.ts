import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RowStateChanged } from '../../../schemas/events/decisions.ts';
import { eventToLine, eventToRow, rowStateLine } from './eventRows.ts';

const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', '"', '\\', '\u2028', '\ud800'));
const answer = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const attempt = fc.record({
  event_id: text,
  run_id: text,
  attempt: fc.nat(),
  occurred_at: fc.nat({ max: 4_102_444_800_000 }),
  passed: fc.oneof(fc.boolean(), fc.constant(null)),
  output_hash: fc.oneof(text, fc.constant(null)),
  checks: fc.array(fc.record({ name: text, answer }), { maxLength: 4 }),
  forbidden_actions: fc.array(text, { maxLength: 3 }),
});
const rowState: fc.Arbitrary<RowStateChanged> = fc
  .record({
    event_id: text,
    occurred_at: fc.nat({ max: 4_102_444_800_000 }),
    producer: text,
    suite: text,
    dataset_version: text,
    agent_version: text,
    row_id: text,
    seq: fc.nat(),
    n: fc.nat(),
    c: fc.nat(),
    ungraded: fc.nat(),
    class: fc.constantFrom('stable-correct', 'stable-wrong', 'flip', 'unclassified'),
    attempt_records: fc.array(attempt, { maxLength: 5 }),
    tags: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
    retracted_runs: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
  })
  .map(
    ({ tags, retracted_runs, ...r }) =>
      ({
        ...r,
        type: 'RowStateChanged',
        schema_version: 2,
        ...(tags ? { tags } : {}),
        ...(retracted_runs ? { retracted_runs } : {}),
      }) as RowStateChanged,
  );

describe('rowStateLine', () => {
  it('is the text JSON.stringify gives of the row_state row, for any record', () => {
    fc.assert(
      fc.property(rowState, (e) => {
        const row = eventToRow(e)!;
        expect(row.table).toBe('row_state');
        expect(rowStateLine(e)).toBe(JSON.stringify(row.row));
        expect(eventToLine(e)).toEqual({ table: 'row_state', line: JSON.stringify(row.row) });
      }),
      { numRuns: 2_000 },
    );
  });

  it('leaves out what JSON.stringify leaves out: a field that is undefined', () => {
    fc.assert(
      fc.property(rowState, fc.nat(), (e, k) => {
        const fields = ['producer', 'suite', 'seq', 'class'] as const;
        const holed = { ...e, [fields[k % fields.length]!]: undefined } as unknown as RowStateChanged;
        expect(rowStateLine(holed)).toBe(JSON.stringify(eventToRow(holed)!.row));
        if (e.attempt_records.length === 0) return;
        const a = {
          ...e.attempt_records[0]!,
          output_hash: undefined,
        } as unknown as RowStateChanged['attempt_records'][number];
        const inner = { ...e, attempt_records: [a, ...e.attempt_records.slice(1)] };
        expect(rowStateLine(inner)).toBe(JSON.stringify(eventToRow(inner)!.row));
      }),
      { numRuns: 500 },
    );
  });
});
