import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { trialsOnLog } from '../helpers/trialsOnLog.ts';

// Issue #13: `passk import` of a file of any size streams with bounded memory. The CLI child runs with a heap too
// small for the file's trials held at once, and a rerun counts nothing twice. The size proves the property, no more
// (issue #28): 10,000 trials with 3.6 KB outputs (37 MB of JSON Lines) take 74 MB of heap held as text and parsed,
// more than the child's whole heap, so a whole-file importer cannot fit; the streaming one does (a heap much closer
// to its needs only makes the collector work: 48 MiB took 18 s a run, 64 MiB 6 s).
const ROWS = 2_500;
const ATTEMPTS = 4;
const TRIALS = ROWS * ATTEMPTS;
/** MiB of V8 heap for the child: below what the file's trials take held at once. */
const HEAP_MB = 64;
/**
 * MiB of each young-generation semi-space: V8's own for this old space is 16 (a heap limit of 112 MiB, now 88), and
 * the collector then worked more (importToolStream.int.test.ts measures why).
 */
const SEMI_MB = 8;

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'passk-import-stream-'));
const dataDir = join(dir, 'data');
const file = join(dir, 'big.jsonl');
const csvFile = join(dir, 'big.csv');
const csvDataDir = join(dir, 'csv-data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAD = 'lorem ipsum '.repeat(300);

/** Writes the file line by line with the stream's backpressure: the test never holds the file either. */
const writeTrials = async (): Promise<void> => {
  const out = createWriteStream(file);
  for (let row = 0; row < ROWS; row++)
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const line = JSON.stringify({
        suite: 'big',
        dataset_version: 'v1',
        row_id: `row-${row}`,
        agent_version: 'a1',
        run_id: 'run-1',
        attempt,
        passed: (row + attempt) % 3 !== 0,
        output: `approve: ${PAD}`,
      });
      if (!out.write(line + '\n')) await once(out, 'drain');
    }
  out.end();
  await once(out, 'finish');
};

/**
 * The same trials as CSV, CRLF line ends, each with a 3.6 KB output (36 MB in all: with its parsed copy, more than
 * the child's heap), every 1000th a quoted cell over two lines with a comma.
 */
const writeCsv = async (): Promise<void> => {
  const out = createWriteStream(csvFile);
  out.write('suite,dataset_version,row_id,agent_version,run_id,attempt,passed,output\r\n');
  for (let row = 0; row < ROWS; row++)
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const output = row % 1000 === 0 ? '"deny,\r\nsee ""policy"""' : `approve: ${PAD}`;
      const line = `big,v1,row-${row},a1,run-1,${attempt},${(row + attempt) % 3 !== 0},${output}\r\n`;
      if (!out.write(line)) await once(out, 'drain');
    }
  out.end();
  await once(out, 'finish');
};

type Run = { code: number; stdout: string; stderr: string };
const passkImport = (input = file, data = dataDir, flags: string[] = []): Promise<Run> => {
  // no passk setting leaks in; the run's build of the CLI (PASSK_CLI_BUILD, test/setup/cliBuild.ts) is not one
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PASSK_') || k === 'PASSK_CLI_BUILD'),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        `--max-old-space-size=${HEAP_MB}`,
        `--max-semi-space-size=${SEMI_MB}`,
        join(root, 'bin/passk.mjs'),
        '--data-dir',
        data,
        'import',
        input,
        ...flags,
      ],
      { cwd: dir, env: { ...env, NO_COLOR: '1' }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
};

describe('passk import streams a large file with bounded memory', () => {
  it(`imports ${TRIALS} trials with a ${HEAP_MB} MiB heap, and a rerun counts nothing twice`, async () => {
    await writeTrials();
    const first = await passkImport();
    expect(first.stderr).not.toMatch(/heap out of memory/);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${TRIALS} trials read; ${TRIALS + 1} events published, 0 already recorded`);
    expect(await trialsOnLog(dataDir)).toEqual({ records: TRIALS, ids: TRIALS });

    const again = await passkImport();
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${TRIALS} trials read; 0 events published, ${TRIALS} already recorded`);
    expect(await trialsOnLog(dataDir)).toEqual({ records: TRIALS, ids: TRIALS });
  }, 300_000);
});

describe('passk import streams a large CSV with bounded memory', () => {
  it(`imports ${TRIALS} CSV trials with a ${HEAP_MB} MiB heap, and a rerun counts nothing twice`, async () => {
    await writeCsv();
    const first = await passkImport(csvFile, csvDataDir);
    expect(first.stderr).not.toMatch(/heap out of memory/);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${TRIALS} trials read; ${TRIALS + 1} events published, 0 already recorded`);
    expect(await trialsOnLog(csvDataDir)).toEqual({ records: TRIALS, ids: TRIALS });

    const again = await passkImport(csvFile, csvDataDir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${TRIALS} trials read; 0 events published, ${TRIALS} already recorded`);
    expect(await trialsOnLog(csvDataDir)).toEqual({ records: TRIALS, ids: TRIALS });
  }, 300_000);
});
