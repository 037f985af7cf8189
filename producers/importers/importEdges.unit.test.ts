import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventPublisher } from '../../processors/ports.ts';
import { InputError } from '../../schemas/errors.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { importFiles } from './importFiles.ts';

// Issue #13: lines that vanished silently from `passk import`. Each is bad input naming file, line and field, with
// nothing published; each test fails on the importer before the fix.
const dir = mkdtempSync(join(tmpdir(), 'passk-import-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, lines: readonly object[]): string => {
  const file = join(dir, name);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
};
const trial = (row: string, attempt: number, extra: object = {}) => ({
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

describe('passk import: nothing vanishes', () => {
  it('two conflicting copies of one attempt: an error naming the second line and the field, nothing published', async () => {
    const file = write('conflict.jsonl', [trial('r1', 0), trial('r1', 1), trial('r1', 0, { passed: false })]);
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.where).toEqual({ file, line: 3, field: 'passed' });
    expect(e.message).toMatch(/already read from .*conflict\.jsonl line 1/);
    expect(publisher.events).toHaveLength(0);
  });

  it('an identical repeated line counts once, and the summary counts what is published', async () => {
    const file = write('repeat.jsonl', [trial('r1', 0), trial('r1', 1), trial('r1', 0)]);
    const publisher = createMemoryPublisher();
    const [r] = await importFiles([file], {}, { publisher });
    expect(r).toMatchObject({ trials: 2, repeated: 1, published: 3 });
    expect(r!.summary[0]).toMatchObject({ trials: 2 });
    expect(publisher.events.filter((e) => e.type === 'TrialRecorded')).toHaveLength(2);
  });

  it('an unknown field ("tag" for "tags"): an error with "did you mean", unless --allow-unknown-fields', async () => {
    const file = write('typo.jsonl', [
      trial('r1', 0, { tags: ['must_not_break'] }),
      trial('r1', 1, { tag: ['must_not_break'] }),
    ]);
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.where).toEqual({ file, line: 2, field: 'tag' });
    expect(e.message).toContain('did you mean "tags"?');
    expect(publisher.events).toHaveLength(0);
    const [r] = await importFiles([file], { allowUnknownFields: true }, { publisher });
    expect(r!.trials).toBe(2);
  });

  it('an event over PASSK_MAX_EVENT_BYTES: an error naming the line and the largest field, nothing published', async () => {
    const lines = Array.from({ length: 31 }, (_, i) =>
      trial(`r${i}`, 0, i === 17 ? { output: 'x'.repeat(5_000) } : {}),
    );
    const file = write('oversized.jsonl', lines);
    const publisher = createMemoryPublisher({ maxEventBytes: 4_000 });
    const e = await rejection(importFiles([file], {}, { publisher, maxEventBytes: 4_000 }));
    expect(e.where).toEqual({ file, line: 18, field: 'output' });
    expect(e.message).toContain('PASSK_MAX_EVENT_BYTES = 4000');
    expect(publisher.events).toHaveLength(0);
  });

  it('an empty file is bad input, as in report', async () => {
    const file = join(dir, 'empty.jsonl');
    writeFileSync(file, '\n\n');
    const e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    expect(e.where).toEqual({ file });
    expect(e.message).toContain('no trials in this file');
  });

  it('a lone UTF-16 surrogate in a row id is refused up front, naming the field', async () => {
    const file = join(dir, 'surrogate.jsonl');
    // JSON.stringify escapes a lone surrogate as \ud800, which JSON.parse reads back as one.
    writeFileSync(file, [trial('r1', 0), trial('bad\ud800row', 0)].map((l) => JSON.stringify(l)).join('\n'));
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.where).toEqual({ file, line: 2, field: 'row_id' });
    expect(publisher.events).toHaveLength(0);
  });

  it('nesting deeper than the log keeps is refused up front, naming the field', async () => {
    const file = join(dir, 'deep.jsonl');
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    const nested = { ...trial('r2', 0), actions: [{ tool: 'lookup', arguments: { q: deep } }] };
    writeFileSync(file, [trial('r1', 0), nested].map((l) => JSON.stringify(l)).join('\n'));
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.message).toMatch(/nested deeper than 64 levels/);
    expect(e.where).toMatchObject({ file, line: 2 });
    expect(e.where?.field).toMatch(/^actions\[0\]\.arguments\.q(\[0\])+$/);
    expect(publisher.events).toHaveLength(0);
  });

  it('one file of more trials than the recorder holds honours its backpressure and publishes every trial once', async () => {
    // The recorder refuses events past maxBuffered (Backpressure), and this publisher is slower than the import reads
    // (each batch of at most 500 waits 100 ms): 6,000 trials through a recorder that holds 2,000 are published only
    // because the import waits for what is in flight (at most maxInFlight) to be durable before it adds more.
    const file = join(dir, 'big.jsonl');
    const lines: string[] = [];
    for (let row = 0; row < 1_500; row++)
      for (let attempt = 0; attempt < 4; attempt++) lines.push(JSON.stringify(trial(`row-${row}`, attempt)));
    writeFileSync(file, lines.join('\n'));
    const memory = createMemoryPublisher();
    const publisher: EventPublisher = {
      ...memory,
      publish: async (batch) => {
        await new Promise((r) => setTimeout(r, 100));
        return memory.publish(batch);
      },
    };
    const progress: number[] = [];
    const [r] = await importFiles(
      [file],
      {},
      {
        publisher,
        maxBuffered: 2_000,
        maxInFlight: 500,
        maxInFlightBytes: 1 << 30,
        onProgress: (done) => progress.push(done),
      },
    );
    expect(r).toMatchObject({ trials: 6_000, published: 6_001, skipped: 0 });
    const ids = new Set(memory.events.filter((e) => e.type === 'TrialRecorded').map((e) => e.event_id));
    expect(ids.size).toBe(6_000);
    expect(progress.at(-1)).toBe(6_000);
  });
});
