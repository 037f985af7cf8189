import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { importFiles, MAX_LINE_BYTES } from './importFiles.ts';

// Issue #27: one very long line was quadratic to split (80 MB: 66 s; 1 GB: still running after 5 minutes), and bytes
// that are not UTF-8 were read as replacement characters, silently.
const dir = mkdtempSync(join(tmpdir(), 'passk-import-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const trial = (row: string, attempt: number) =>
  JSON.stringify({
    suite: 'refunds',
    dataset_version: 'v1',
    row_id: row,
    agent_version: 'v1',
    run_id: 'run-1',
    attempt,
    passed: true,
  });
const rejection = async (p: Promise<unknown>): Promise<InputError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
};

describe('passk import: long lines and bytes that are not UTF-8', () => {
  it(`refuses a line over ${MAX_LINE_BYTES / 2 ** 20} MiB, naming file and line, after reading no more than that`, async () => {
    const file = join(dir, 'long.jsonl');
    const fd = openSync(file, 'w');
    writeSync(fd, `${trial('r1', 0)}\n{"suite": "`);
    const block = Buffer.alloc(4 * 2 ** 20, 'x');
    for (let written = 0; written <= MAX_LINE_BYTES; written += block.length) writeSync(fd, block);
    writeSync(fd, '"}\n');
    closeSync(fd);
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.message).toContain(`${file}, line 2: the line is over ${MAX_LINE_BYTES / 2 ** 20} MiB`);
    expect(publisher.events).toHaveLength(0);
  });

  it('reads a line of 8 MiB whole (the rest of the file after it too)', async () => {
    const file = join(dir, 'big.jsonl');
    const long = JSON.stringify({ suite: 'x'.repeat(8 * 2 ** 20) });
    writeFileSync(file, `${trial('r1', 0)}\n${long}\n${trial('r1', 1)}\n`);
    const e = await rejection(importFiles([file], {}, { publisher: createMemoryPublisher() }));
    // the 8 MiB line was read and parsed as one JSON line (it lacks a trial's fields), not cut anywhere
    expect(e.message.startsWith(`${file}, line 2, field dataset_version:`)).toBe(true);
  });

  it('refuses bytes that are not UTF-8, naming file, line and the byte in the line', async () => {
    const file = join(dir, 'latin1.jsonl');
    const bad = Buffer.concat([
      Buffer.from(`${trial('r1', 0)}\n${trial('r1', 1)}\n{"suite": "caf`),
      Buffer.from([0xe9]),
      Buffer.from(`"}\n`),
    ]);
    writeFileSync(file, bad);
    const publisher = createMemoryPublisher();
    const e = await rejection(importFiles([file], {}, { publisher }));
    expect(e.message).toBe(
      `${file}, line 3: not valid UTF-8: byte 0xe9 at byte 15 of the line; save the file as UTF-8`,
    );
    expect(publisher.events).toHaveLength(0);
  });
});
