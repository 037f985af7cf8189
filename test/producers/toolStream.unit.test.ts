import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { writeZip } from '../helpers/zipWriter.ts';
import { createMemoryPublisher } from '../../producers/sdk/memoryPublisher.ts';
import { type ImportOptions, pythonJsonToJson } from '../../producers/importers/common.ts';
import { detectFormat, parseResultsFile } from '../../producers/importers/detect.ts';
import { importFiles } from '../../producers/importers/importFiles.ts';
import { createPythonTokenFilter, scanJson } from '../../producers/importers/jsonStream.ts';
import { readResultsText } from '../../producers/importers/readResults.ts';
import { openToolFile } from '../../producers/importers/toolStream.ts';

// Issue #13: other tools' JSON documents and Inspect's .eval zips are streamed (toolStream.ts). The streamed reader
// gives exactly the trials (same ids, same order) the whole-document parsers give, on every real fixture.
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const TOOL = join(FIXTURES, 'tool-outputs');
const REAL = [
  ...readdirSync(TOOL)
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(TOOL, f)),
  join(FIXTURES, 'inspect-unscored-epochs.json'),
  join(FIXTURES, 'inspect-epochs2-intercode-ctf.eval'),
];
const dir = mkdtempSync(join(tmpdir(), 'passk-tool-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const whole = async (file: string, opts: ImportOptions = {}) => {
  const text = await readResultsText(file);
  const format = detectFormat(file, text);
  if (format === 'jsonl' || format === 'csv') throw new Error(`unexpected ${format}`);
  return { format, trials: parseResultsFile(file, text, format, opts).trials };
};
const streamed = async (file: string, opts: ImportOptions = {}) => {
  const source = await openToolFile(file, opts);
  const trials = [];
  for await (const e of source.entries()) trials.push(e.t);
  return { format: source.format, trials };
};
const rejection = async (p: Promise<unknown>): Promise<InputError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
};

describe('streaming reads the same trials as the whole-document parsers, on every real file', () => {
  it('finds the fixtures', () => expect(REAL.length).toBeGreaterThanOrEqual(9));
  for (const file of REAL)
    it(file.slice(FIXTURES.length), async () => {
      for (const opts of [{}, { agentVersion: 'a1', suite: 's1', runId: 'r1', datasetId: 'd1' }]) {
        const a = await whole(file, opts);
        const b = await streamed(file, opts);
        expect(b.format).toBe(a.format);
        expect(b.trials.length).toBeGreaterThan(0);
        expect(b.trials).toEqual(a.trials);
      }
      // `passk import` publishes exactly these trials
      const publisher = createMemoryPublisher();
      await importFiles([file], {}, { publisher });
      const ids = publisher.events.filter((e) => e.type === 'TrialRecorded').map((e) => e.event_id);
      expect(ids).toEqual((await whole(file)).trials.map((t) => t.event_id));
    });

  it('a pretty-printed copy with CRLF and Python NaN scores reads as the compact file does', async () => {
    const file = join(TOOL, 'vitals-inspect-format-epochs3-are-gpt-4o.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { samples: { scores: Record<string, { value: unknown }> }[] };
    const scorer = Object.keys(doc.samples[0]!.scores)[0]!;
    doc.samples[1]!.scores[scorer]!.value = '@NAN@';
    const text = JSON.stringify(doc, null, 2).replace('"@NAN@"', 'NaN').replace(/\n/g, '\r\n');
    const copy = join(dir, 'vitals-pretty.json');
    writeFileSync(copy, text);
    const a = parseResultsFile(copy, text, 'inspect', {}).trials;
    const b = (await streamed(copy)).trials;
    expect(b).toEqual(a);
    expect(b[1]).toMatchObject({ passed: null, error_kind: 'unscored' });
  });

  it('promptfoo results out of testIdx order: the same trials, attempts numbered in testIdx order', async () => {
    const file = join(TOOL, 'promptfoo-repeat3-results.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { results: { results: unknown[] } };
    doc.results.results.reverse();
    const copy = join(dir, 'promptfoo-reversed.json');
    const text = JSON.stringify(doc);
    writeFileSync(copy, text);
    const a = parseResultsFile(copy, text, 'promptfoo', {}).trials;
    const b = (await streamed(copy)).trials;
    const byId = <T extends { event_id: string }>(xs: T[]) =>
      [...xs].sort((x, y) => x.event_id.localeCompare(y.event_id));
    expect(byId(b)).toEqual(byId(a));
    expect(b.map((t) => t.event_id)).not.toEqual(a.map((t) => t.event_id)); // file order, not testIdx order
  });
});

describe("Python's NaN tokens, streamed", () => {
  it('become null outside strings only, wherever a chunk ends', () => {
    const text = '{"NaN": [NaN, -Infinity, "Infinity", Infinity, -1, "a\\"NaN"], "x": -5e-3, "NaNa": NaN}';
    for (let cut = 0; cut <= text.length; cut++)
      for (let cut2 = cut; cut2 <= text.length; cut2 += 7) {
        const f = createPythonTokenFilter();
        const out = f.push(text.slice(0, cut)) + f.push(text.slice(cut, cut2)) + f.push(text.slice(cut2)) + f.end();
        expect(out).toBe(pythonJsonToJson(text));
      }
  });

  it('a document is rebuilt as JSON.parse reads it: "__proto__" keys own, streamed arrays element by element', async () => {
    const file = join(dir, 'proto.json');
    writeFileSync(file, '\uFEFF{"__proto__": {"a": 1}, "samples": [{"id": 1}, {"id": 2}], "n": [1e400, -0.5, true]}');
    const scan = scanJson(file, new Set(['samples']));
    const seen = [];
    for await (const e of scan.elements()) seen.push(e);
    expect(seen).toEqual([
      { array: 'samples', index: 0, value: { id: 1 } },
      { array: 'samples', index: 1, value: { id: 2 } },
    ]);
    const { skeleton, counts } = scan.result();
    expect(Object.getPrototypeOf(skeleton)).toBe(Object.prototype);
    expect(Object.keys(skeleton as object)).toEqual(['__proto__', 'samples', 'n']);
    expect(skeleton).toEqual(JSON.parse('{"__proto__": {"a": 1}, "samples": [{"id": 1}], "n": [1e400, -0.5, true]}'));
    expect(counts.get('samples')).toBe(2);
  });
});

describe('a refused tool file names the file and the place, and publishes nothing', () => {
  it('a bad simulation names its JSON path and field', async () => {
    const file = join(TOOL, 'tau2-grok-4-airline-4trials.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { simulations: { reward_info: unknown }[] };
    doc.simulations[9]!.reward_info = { reward: 'high' };
    const copy = join(dir, 'tau2-bad.json');
    writeFileSync(copy, JSON.stringify(doc));
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([copy], {}, { publisher }));
    expect(e.where).toEqual({ file: copy, field: 'simulations[9].reward_info.reward' });
    expect(publisher.events).toHaveLength(0);
  });

  it('broken JSON names its line', async () => {
    const copy = join(dir, 'broken.json');
    writeFileSync(copy, '[\n {"task_id": 1, "reward": 1, "traj": []},\n {"task_id": 2, "reward": }\n]');
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([copy], { format: 'tau-bench' }, { publisher }));
    expect(e.where).toEqual({ file: copy, line: 3 });
    expect(e.message).toContain('not valid JSON');
    expect(publisher.events).toHaveLength(0);
  });

  it("a trial field the log cannot keep names the entry and the trial's field", async () => {
    const copy = join(dir, 'tau-surrogate.json');
    const entry = (id: number, instruction: string) => ({
      task_id: id,
      reward: 1,
      traj: [],
      info: { task: { instruction } },
    });
    // a lone surrogate (text that is not valid Unicode) in the task's instruction, which becomes the trial's input
    writeFileSync(copy, JSON.stringify([entry(1, 'ok'), entry(2, 'bad \ud800')]));
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([copy], {}, { publisher }));
    expect(e.where).toEqual({ file: copy, field: '[1]: input' });
    expect(e.message).toContain('lone UTF-16 surrogate');
    expect(publisher.events).toHaveLength(0);
  });
});

describe("Inspect's .eval zip, one sample at a time", () => {
  const vitals = JSON.parse(readFileSync(join(TOOL, 'vitals-inspect-format-epochs3-are-gpt-4o.json'), 'utf8')) as {
    samples: { id: string | number; epoch: number }[];
  } & Record<string, unknown>;
  const { samples, ...header } = vitals;

  it('reads the samples in epoch and id order, as the JSON log of the same eval', async () => {
    const file = join(dir, 'vitals.eval');
    // entries in another order than Inspect's (epoch, then id): the reader sorts them
    const entries = [...samples]
      .reverse()
      .map((s): [string, string] => [`samples/${s.id}_epoch_${s.epoch}.json`, JSON.stringify(s)]);
    await writeZip(file, [['header.json', JSON.stringify(header)], ...entries]);
    const a = await whole(file);
    const b = await streamed(file);
    expect(b.trials).toEqual(a.trials);
    expect(new Set(b.trials.map((t) => t.event_id)).size).toBe(samples.length);
  });

  it('a sample over the per-entry bound is refused naming the entry; nothing is published', async () => {
    const file = join(dir, 'vitals-big-entry.eval');
    const big = { ...samples[0]!, metadata: { pad: 'x'.repeat(200_000) } };
    await writeZip(file, [
      ['header.json', JSON.stringify(header)],
      ['samples/a_epoch_1.json', JSON.stringify(samples[1])],
      ['samples/b_epoch_1.json', JSON.stringify(big)],
    ]);
    const e = await rejection(openToolFile(file, {}, undefined, 100_000));
    expect(e.where).toEqual({ file: `${file}:samples/b_epoch_1.json` });
    expect(e.message).toContain('over the 0.1 MiB one entry of an .eval log can be read in');
    const publisher = createMemoryPublisher();
    expect((await importFiles([file], {}, { publisher }))[0]).toMatchObject({ trials: 2 });
  });

  it('a sample that is not an Inspect sample names its entry and field', async () => {
    const file = join(dir, 'vitals-bad.eval');
    await writeZip(file, [
      ['header.json', JSON.stringify(header)],
      ['samples/a_epoch_1.json', JSON.stringify({ ...samples[0], epoch: 'one' })],
    ]);
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.where).toEqual({ file: `${file}:samples/a_epoch_1.json`, field: 'epoch' });
    expect(publisher.events).toHaveLength(0);
  });
});

describe('an import of a tool file cut short is finished by a rerun, counting nothing twice', () => {
  const files = [
    join(TOOL, 'tau-bench-gpt-4o-airline-historical.json'),
    join(TOOL, 'tau2-grok-4-airline-4trials.json'),
    join(TOOL, 'promptfoo-repeat3-results.json'),
    join(TOOL, 'vitals-inspect-format-epochs3-are-gpt-4o.json'),
    join(FIXTURES, 'inspect-epochs2-intercode-ctf.eval'),
  ];
  for (const file of files)
    it(file.slice(FIXTURES.length), async () => {
      const log = createMemoryLog({ partitions: 1 });
      const expected = (await whole(file)).trials.map((t) => t.event_id);
      // the log refuses every publish after the first: the import stops part way (as when it is killed)
      let calls = 0;
      log.beforePublish = async () => {
        if (calls++ > 0) throw new Error('the log went away');
      };
      const deps = { publisher: log.publisher, source: log, maxInFlight: 1, retry: NO_RETRY };
      await expect(importFiles([file], {}, deps)).rejects.toThrow(/the log went away/);
      const partial = trialIds(log);
      expect(partial.length).toBeGreaterThan(0);
      expect(partial.length).toBeLessThan(expected.length);
      log.beforePublish = undefined;
      const [r] = await importFiles([file], {}, { ...deps, maxInFlight: 10_000 });
      expect(r).toMatchObject({ trials: expected.length, skipped: partial.length });
      expect(trialIds(log).sort()).toEqual([...expected].sort());
    });
});

const NO_RETRY = { retries: 0, initialMs: 0, factor: 1, maxMs: 0 };
const trialIds = (log: ReturnType<typeof createMemoryLog>): string[] =>
  log
    .records(TOPICS.trials)
    .flat()
    .map((r) => JSON.parse(Buffer.from(r.value).toString('utf8')) as { type: string; event_id: string })
    .filter((e) => e.type === 'TrialRecorded')
    .map((e) => e.event_id);
