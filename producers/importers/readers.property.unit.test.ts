import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import { parseTrialText } from '../files/readTrialFiles.ts';
import { pythonJsonToJson } from './common.ts';
import { detectFormat, parseResultsFile } from './detect.ts';
import { illFormedField } from '../../schemas/wellFormed.ts';

// Issue #13: arbitrary strings and bytes through every reader: a result or an InputError naming the file, never a
// crash of another kind.
const onlyInputErrors = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch (e) {
    if (e instanceof InputError) return e.message.includes('f.');
    throw e;
  }
};
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 4 }).map((vs) => vs.map((v) => JSON.stringify(v)).join('\n')),
  fc.constantFrom(
    '[{"task_id": 1, "reward": NaN, "traj": []}]',
    '{"eval": {"task": "t", "model": "m"}, "samples": [{"id": 1, "scores": {"s": {"value": NaN}}}]}',
  ),
);
const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);

describe('readers under arbitrary input', () => {
  it('flat JSONL and CSV readers: a trial list or an InputError', () => {
    fc.assert(
      fc.property(
        anyText,
        (text) =>
          onlyInputErrors(() => parseTrialText(text, 'f.jsonl')) &&
          onlyInputErrors(() => parseTrialText(text, 'f.csv')),
      ),
      { numRuns: 300 },
    );
  });

  it("other tools' readers: every format, detected or forced", () => {
    fc.assert(
      fc.property(
        anyText,
        fc.constantFrom('tau-bench', 'tau2-bench', 'promptfoo', 'inspect'),
        (text, format) =>
          onlyInputErrors(() => {
            const detected = detectFormat('f.json', text);
            if (detected !== 'jsonl' && detected !== 'csv') parseResultsFile('f.json', text, detected, {});
          }) && onlyInputErrors(() => parseResultsFile('f.json', text, format, {})),
      ),
      { numRuns: 300 },
    );
  });

  it('deep nesting and huge numbers are read or refused, never a stack overflow', () => {
    for (const text of [deep(5_000), `[${'1e999,'.repeat(100)}1]`, `{"a": ${'9'.repeat(400)}}`])
      expect(onlyInputErrors(() => parseResultsFile('f.json', text, 'tau-bench', {}))).toBe(true);
  });

  it("Python's NaN tokens become null outside strings only", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const text = JSON.stringify(v);
        expect(pythonJsonToJson(text)).toBe(text);
      }),
      { numRuns: 300 },
    );
    expect(JSON.parse(pythonJsonToJson('{"NaN": [NaN, -Infinity, "Infinity"]}'))).toEqual({
      NaN: [null, null, 'Infinity'],
    });
  });

  it('finds any lone surrogate, anywhere in a value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.integer({ min: 0xd800, max: 0xdfff }), (v, cp) => {
        expect(illFormedField(v)).toBeUndefined();
        expect(illFormedField({ wrap: [v, `x${String.fromCharCode(cp)}y`] })).toBe('wrap[1]');
      }),
      { numRuns: 200 },
    );
  });
});
