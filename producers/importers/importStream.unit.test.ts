import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { importFiles } from './importFiles.ts';
import { readResultsText } from './readResults.ts';
import { parseTrialText } from '../files/readTrialFiles.ts';

// Issue #13: JSON Lines are streamed in two passes (check, then publish). Lines are split as the whole-file reader
// splits them, and a conflict names the place of the first copy, in this file or an earlier one.
const dir = mkdtempSync(join(tmpdir(), 'passk-import-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const trial = (row: string, attempt: number, extra: object = {}) =>
  JSON.stringify({
    suite: 'refunds',
    dataset_version: '2026-11-01',
    row_id: row,
    agent_version: 'v1',
    run_id: 'run-1',
    attempt,
    passed: attempt % 2 === 0,
    ...extra,
  });
const rejection = async (p: Promise<unknown>): Promise<InputError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
};

describe('passk import streams JSON Lines', () => {
  it('a BOM, CRLF line ends and blank lines: lines are numbered as in the file', async () => {
    const file = join(dir, 'crlf.jsonl');
    writeFileSync(file, `\uFEFF${trial('r1', 0)}\r\n\r\n${trial('r1', 1)}\r\n{"suite": 1}\r\n`);
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.where).toMatchObject({ file, line: 4 });
    expect(publisher.events).toHaveLength(0);
    writeFileSync(file, `\uFEFF${trial('r1', 0)}\r\n\r\n${trial('r1', 1)}`);
    const [r] = await importFiles([file], {}, { publisher });
    expect(r).toMatchObject({ trials: 2, published: 3, repeated: 0 });
  });

  it('a conflicting copy in a second file names the first file and line; nothing is published', async () => {
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    writeFileSync(a, [trial('r1', 0), trial('r2', 0), trial('r3', 0)].join('\n'));
    writeFileSync(b, [trial('r4', 0), trial('r2', 0, { score: 0.5 })].join('\n'));
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([a, b], {}, { publisher }));
    expect(e.where).toEqual({ file: b, line: 2, field: 'score' });
    expect(e.message).toContain(`already read from ${a} line 2 with a different score`);
    expect(publisher.events).toHaveLength(0);
  });

  it('the same attempt under another event id names the first place', async () => {
    const file = join(dir, 'ids.jsonl');
    writeFileSync(
      file,
      [trial('r1', 0), trial('r1', 1), trial('r1', 0, { event_id: '01JDQ9W8Z3M5V7X2K4N6P8R0ST' })].join('\n'),
    );
    const e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    expect(e.where).toEqual({ file, line: 3, field: 'event_id' });
    expect(e.message).toContain(`already read from ${file} line 1 under another event id`);
  });

  it('a second file repeating the first counts once, and each file reports its own trials', async () => {
    const a = join(dir, 'same-a.jsonl');
    const b = join(dir, 'same-b.jsonl');
    writeFileSync(a, [trial('r1', 0), trial('r1', 1)].join('\n'));
    writeFileSync(b, [trial('r1', 1), trial('r2', 0)].join('\n'));
    const publisher = createMemoryPublisher();
    const [ra, rb] = await importFiles([a, b], {}, { publisher });
    expect(ra).toMatchObject({ trials: 2, repeated: 0 });
    expect(rb).toMatchObject({ trials: 1, repeated: 1 });
    expect(publisher.events.filter((e) => e.type === 'TrialRecorded')).toHaveLength(3);
  });

  it('a missing file is bad input naming it', async () => {
    const file = join(dir, 'missing.jsonl');
    const e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    expect(e.where).toEqual({ file });
    expect(e.message).toContain('cannot read the file: ENOENT');
  });
});

const HEAD = 'suite,dataset_version,row_id,agent_version,run_id,attempt,passed,output';
const csvRow = (row: string, attempt: number, output = 'ok') =>
  `refunds,2026-11-01,${row},v1,run-1,${attempt},${attempt % 2 === 0},${output}`;

describe('passk import streams CSV', () => {
  it('reads what the whole-file reader reads: a BOM, CRLF, blank lines and quoted cells over several lines', async () => {
    const file = join(dir, 'multi.csv');
    const text = `\uFEFF${HEAD}\r\n${csvRow('r1', 0)}\r\n\r\n${csvRow('r1', 1, '"two\r\nlines, ""quoted"""')}\r\n${csvRow('r2', 0)}\r\n`;
    writeFileSync(file, text);
    const publisher = createMemoryPublisher();
    const [r] = await importFiles([file], {}, { publisher });
    expect(r).toMatchObject({ format: 'csv', trials: 3, published: 4 });
    const trials = publisher.events.filter((e) => e.type === 'TrialRecorded');
    const whole = parseTrialText(readFileSync(file, 'utf8'), file);
    expect(trials.map((t) => [t.event_id, t.output])).toEqual(whole.map((w) => [w.event.event_id, w.event.output]));
    expect(whole.map((w) => w.origin.line)).toEqual([2, 4, 6]);
    expect(trials[1]!.output).toBe('two\r\nlines, "quoted"');
  });

  it('a bad cell after a multi-line cell names its line; nothing is published', async () => {
    const file = join(dir, 'bad.csv');
    writeFileSync(file, [HEAD, csvRow('r1', 0, '"a\nb\nc"'), csvRow('r2', 0).replace(',0,', ',x,')].join('\n'));
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.where).toEqual({ file, line: 5, field: 'attempt' });
    expect(publisher.events).toHaveLength(0);
  });

  it('an unterminated quote, a short record and a conflicting copy name the line', async () => {
    const file = join(dir, 'broken.csv');
    writeFileSync(file, [HEAD, csvRow('r1', 0), `${csvRow('r2', 0, '"open')}\n`].join('\n'));
    let e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    expect(e.where).toEqual({ file, line: 3 });
    expect(e.message).toContain('Quote Not Closed');
    writeFileSync(file, [HEAD, csvRow('r1', 0), 'refunds,2026-11-01'].join('\n'));
    e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    expect(e.where).toEqual({ file, line: 3 });
    expect(e.message).toContain('expected 8 cells as in the header, found 2');
    writeFileSync(file, [HEAD, csvRow('r1', 0), csvRow('r2', 0), csvRow('r1', 0, 'other')].join('\n'));
    e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    expect(e.where).toEqual({ file, line: 4, field: 'output' });
    expect(e.message).toContain(`already read from ${file} line 2 with a different output`);
  });

  it('JSON Lines under another name are told by their first lines and streamed', async () => {
    const file = join(dir, 'trials.txt');
    writeFileSync(file, [trial('r1', 0), trial('r1', 1)].join('\n'));
    const [r] = await importFiles([file], {}, { publisher: createMemoryPublisher() });
    expect(r).toMatchObject({ format: 'jsonl', trials: 2 });
  });
});

describe("other tools' JSON documents are read whole, within a bound", () => {
  it('a document over the bound is refused naming the file, before it is read', async () => {
    const file = join(dir, 'big-tau.json');
    const entry = { task_id: 1, reward: 1, info: {}, traj: [], trial: 0 };
    writeFileSync(file, JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ ...entry, task_id: i }))));
    const e = await rejection(readResultsText(file, 1000));
    expect(e.where).toEqual({ file });
    expect(e.message).toContain(`${file}: is 0.0 MiB, over the 0.0 MiB a JSON results document can be read in`);
    expect(await readResultsText(file, 1_000_000)).toContain('"task_id":199');
  });
});

describe('passk import reports its reading passes', () => {
  const fixtures = join(import.meta.dirname, '..', '..', 'test', 'fixtures');
  const reads = async (file: string) => {
    const calls: [number, number][] = [];
    await importFiles([file], {}, { publisher: createMemoryPublisher(), onReading: (d, t) => calls.push([d, t]) });
    return calls;
  };

  it('ends at every byte of the passes before publishing: a flat file once, a tool’s file twice', async () => {
    const size = (f: string) => readFileSync(f).length;
    for (const [file, passes] of [
      [join(fixtures, 'public-mini.jsonl'), 1],
      [join(fixtures, 'flat-mini.csv'), 1],
      [join(fixtures, 'tool-outputs', 'tau2-grok-4-airline-4trials.json'), 2],
    ] as const) {
      const calls = await reads(file);
      expect(calls.at(-1), file).toEqual([size(file) * passes, size(file) * passes]);
      for (const [i, [done, total]] of calls.entries()) {
        expect(done).toBeLessThanOrEqual(total);
        if (i > 0) expect(done).toBeGreaterThanOrEqual(calls[i - 1]![0]);
      }
    }
  });

  it('counts a large file as it goes, before the publishing starts', async () => {
    const file = join(dir, 'large.jsonl');
    writeFileSync(file, Array.from({ length: 5_000 }, (_, i) => trial(`r${i}`, 0)).join('\n'));
    const order: string[] = [];
    await importFiles(
      [file],
      {},
      {
        publisher: createMemoryPublisher(),
        onReading: (d, t) => order.push(d < t ? 'reading' : 'read'),
        readingEveryMs: 1,
        onProgress: () => order.push('publishing'),
      },
    );
    // the bytes were counted while the file was read, not only at the end, and all before the first publish
    expect(order.indexOf('reading')).toBeGreaterThanOrEqual(0);
    expect(order.lastIndexOf('read')).toBeLessThan(order.indexOf('publishing'));
  });
});
