import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import { parseMustNotBreakList } from './mustNotBreakFile.ts';
import { parseJudgmentLines } from './judgmentFile.ts';
import { mergeTrials, parseTrialText, readTrialFiles } from './readTrialFiles.ts';
import { readGateRulesFile } from './gateRulesFile.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../test/fixtures/${name}`, import.meta.url));
const flat = (o: Record<string, unknown>) =>
  JSON.stringify({
    suite: 's',
    dataset_version: 'd',
    row_id: 'r',
    agent_version: 'v',
    run_id: 'run',
    attempt: 0,
    passed: true,
    ...o,
  });

/** The InputError a call throws, so its file, line and field can be checked. */
const inputError = (f: () => unknown): InputError => {
  try {
    f();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
};

describe('public-trials format', () => {
  it('maps domain, model, task_id and trial; reward null is ungraded; source is the dataset version', async () => {
    const { trials } = await readTrialFiles([fixture('public-mini.jsonl')]);
    expect(
      trials.map((t) => [t.suite, t.agent.version, t.row_id, t.attempt, t.passed, t.dataset_version, t.run_id]),
    ).toEqual([
      ['airline', 'm1', '0', 0, true, 'mini-bench', 'mini-bench'],
      ['airline', 'm1', '0', 1, false, 'mini-bench', 'mini-bench'],
      ['airline', 'm1', '0', 2, null, 'mini-bench', 'mini-bench'],
      ['airline', 'm1', '1', 0, true, 'mini-bench', 'mini-bench'],
      ['retail', 'm1', '7', 0, false, 'public', 'public'],
    ]);
    expect(trials[0]!.score).toBe(1);
  });

  it('gives each trial a deterministic event id: reading twice yields the same events', async () => {
    const a = await readTrialFiles([fixture('public-mini.jsonl')]);
    const b = await readTrialFiles([fixture('public-mini.jsonl')]);
    expect(a.trials).toEqual(b.trials);
    expect(new Set(a.trials.map((t) => t.event_id)).size).toBe(5);
  });

  it('a file given twice counts each attempt once, and says so', async () => {
    const r = await readTrialFiles([fixture('public-mini.jsonl'), fixture('public-mini.jsonl')]);
    expect(r.trials).toHaveLength(5);
    expect(r.files[1]).toMatchObject({ trials: 5, duplicates: 5 });
  });
});

describe('flat format', () => {
  it('reads JSONL lines into TrialRecorded events, keeping the optional fields', () => {
    const [t] = parseTrialText(
      flat({ output: 'deny', checks: [{ name: 'window', answer: 'inside' }], tags: ['must_not_break'], model: 'gpt' }),
      'f.jsonl',
    );
    expect(t!.event).toMatchObject({
      type: 'TrialRecorded',
      suite: 's',
      agent: { version: 'v', model: 'gpt' },
      output: 'deny',
      tags: ['must_not_break'],
      occurred_at: 0,
    });
    expect(t!.origin).toEqual({ file: 'f.jsonl', line: 1 });
  });

  it('keeps an event id and time given in the file', () => {
    const [t] = parseTrialText(flat({ event_id: '01KAAAAAAAAAAAAAAAAAAAAAAA', occurred_at: 5 }), 'f.jsonl');
    expect(t!.event).toMatchObject({ event_id: '01KAAAAAAAAAAAAAAAAAAAAAAA', occurred_at: 5 });
  });

  it('reads the flat format as CSV: quoted cells, multi-line cells, empty = ungraded, tags and JSON cells', () => {
    const read = parseTrialText(readFileSync(fixture('flat-mini.csv'), 'utf8'), 'flat-mini.csv');
    expect(read.map((r) => [r.origin.line, r.event.row_id, r.event.passed])).toEqual([
      [2, 'r1', true],
      [3, 'r1', false],
      [5, 'r2', null],
    ]);
    expect(read[0]!.event).toMatchObject({
      output: 'approve, with note',
      tags: ['must_not_break', 'vip'],
      checks: [{ name: 'window', answer: 'inside' }],
    });
    expect(read[1]!.event.output).toBe('deny\n(multi-line)');
  });

  it('readTrialFiles (report) streams a CSV file and reads what the whole-text reader reads', async () => {
    const file = fixture('flat-mini.csv');
    const whole = parseTrialText(readFileSync(file, 'utf8'), file);
    const { trials, files } = await readTrialFiles([file]);
    expect(trials).toEqual(whole.map((r) => r.event));
    expect(files).toEqual([{ file, trials: 3, duplicates: 0 }]);
  });

  it('the same attempt with different content is an error naming both places', () => {
    const a = parseTrialText(flat({ passed: true }), 'a.jsonl');
    const b = parseTrialText(`\n${flat({ passed: false })}`, 'b.jsonl');
    const e = inputError(() => mergeTrials([...a, ...b]));
    expect(e.where).toEqual({ file: 'b.jsonl', line: 2, field: 'passed' });
    expect(e.message).toContain('a.jsonl line 1');
  });

  it('two event ids for the same attempt slot are an error too, never a silent choice', () => {
    const a = parseTrialText(flat({ event_id: '01KAAAAAAAAAAAAAAAAAAAAAAA' }), 'a.jsonl');
    const b = parseTrialText(flat({ event_id: '01KBBBBBBBBBBBBBBBBBBBBBBB' }), 'b.jsonl');
    expect(inputError(() => mergeTrials([...a, ...b])).where).toEqual({ file: 'b.jsonl', line: 1, field: 'event_id' });
  });
});

describe('bad input names file, line and field', () => {
  const cases: [string, string, { line: number; field?: string }][] = [
    ['not JSON', `${flat({})}\n{"suite": `, { line: 2 }],
    ['a wrong type', `${flat({})}\n\n${flat({ passed: 'yes' })}`, { line: 3, field: 'passed' }],
    ['a missing field', flat({ suite: undefined }), { line: 1, field: 'suite' }],
    ['a bad nested field', flat({ checks: [{ name: '' }] }), { line: 1, field: 'checks.0.name' }],
    [
      'a bad public record',
      '{"model":"m","domain":"d","task_id":"1","trial":-1,"reward":1}',
      { line: 1, field: 'trial' },
    ],
    ['an array', '[1,2]', { line: 1 }],
  ];
  it.each(cases)('%s', (_, text, where) => {
    expect(inputError(() => parseTrialText(text, 'bad.jsonl')).where).toEqual({ file: 'bad.jsonl', ...where });
  });

  it('CSV: a bad verdict cell, a bad number, a short row', () => {
    const head = 'suite,dataset_version,row_id,agent_version,run_id,attempt,passed\n';
    expect(inputError(() => parseTrialText(`${head}s,d,r,v,run,0,yes\n`, 'b.csv')).where).toEqual({
      file: 'b.csv',
      line: 2,
      field: 'passed',
    });
    expect(inputError(() => parseTrialText(`${head}s,d,r,v,run,x,true\n`, 'b.csv')).where).toEqual({
      file: 'b.csv',
      line: 2,
      field: 'attempt',
    });
    expect(inputError(() => parseTrialText(`${head}s,d,r,v,run,0,true\ns,d\n`, 'b.csv')).where).toEqual({
      file: 'b.csv',
      line: 3,
    });
  });

  it('a file with no trials, or one that cannot be read, is an error too', async () => {
    await expect(readTrialFiles([fixture('empty.jsonl')])).rejects.toThrow(/no trials/);
    await expect(readTrialFiles([fixture('does-not-exist.jsonl')])).rejects.toThrow(/no such file \(looked in /);
  });
});

describe('must-not-break lists', () => {
  it('reads plain ids, suite-qualified ids and JSON objects; skips blanks and comments', () => {
    const text =
      '# tagged before results\n42\n\nairline::7\n  retail :: a::b  \n{"suite":"x","row_id":"#1"}\n{"row_id":3}\n';
    expect(parseMustNotBreakList(text, 'm.txt')).toEqual([
      { row_id: '42' },
      { suite: 'airline', row_id: '7' },
      { suite: 'retail', row_id: 'a::b' },
      { suite: 'x', row_id: '#1' },
      { row_id: '3' },
    ]);
  });
  it('names the line of a bad entry', () => {
    expect(inputError(() => parseMustNotBreakList('ok\n::7\n', 'm.txt')).where).toEqual({
      file: 'm.txt',
      line: 2,
      field: 'suite',
    });
    expect(inputError(() => parseMustNotBreakList('{"row": 1}', 'm.txt')).where).toMatchObject({
      file: 'm.txt',
      line: 1,
    });
  });
});

describe('judgment files and gate rules', () => {
  it('reads judgments and labels without an envelope', () => {
    const text = [
      '{"type":"JudgmentRecorded","item_id":"i1","judge":{"id":"j"},"rubric_version":"r1","kind":"pointwise","label":"pass","score":4}',
      '{"type":"LabelRecorded","item_id":"i1","labeler":"ann","label":"pass"}',
    ].join('\n');
    const r = parseJudgmentLines(text, 'j.jsonl');
    expect(r.judgments).toHaveLength(1);
    expect(r.labels[0]).toMatchObject({ item_id: 'i1', label: 'pass' });
    expect(
      inputError(() => parseJudgmentLines('{"type":"JudgmentRecorded","item_id":"i1"}', 'j.jsonl')).where,
    ).toMatchObject({ file: 'j.jsonl', line: 1, field: 'judge' });
  });
  it('refuses a misspelled gate rule instead of ignoring it', async () => {
    await expect(readGateRulesFile(fixture('gate-rules-typo.json'))).rejects.toThrow(/max_pass1_drop/);
    await expect(readGateRulesFile(fixture('gate-rules.json'))).resolves.toMatchObject({
      zero_forbidden_actions: true,
    });
  });
});

describe('the τ-bench file', () => {
  const original = fileURLToPath(new URL('../../examples/public-trials/tau_bench.jsonl', import.meta.url));
  const bundled = fileURLToPath(new URL('../../examples/tau-bench-gpt-4o.jsonl', import.meta.url));
  it("the README's short example is the public tau_bench.jsonl, byte for byte", () => {
    const text = readFileSync(bundled, 'utf8');
    expect(text).toBe(readFileSync(original, 'utf8'));
    expect(text.trim().split('\n')).toHaveLength(660);
  });
});
