/**
 * Other tools' files, streamed (toolStream.ts) against the whole-document reader they replaced (readFile,
 * JSON.parse and the same mapping, `parseResultsFile`), on the same τ-bench document, in the same run. The streamed
 * read is timed as `passk import` reads a file once: the pass at open plus one mapping pass.
 */
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseResultsFile } from '../producers/importers/detect.ts';
import { openToolFile } from '../producers/importers/toolStream.ts';

export interface ToolStreamLine {
  readonly bytes: number;
  readonly trials: number;
  readonly streamedMs: number;
  readonly wholeMs: number;
}

export const benchToolStream = async (opts: {
  root: string;
  copies: number;
  runs: number;
  log: (line: string) => void;
}): Promise<ToolStreamLine> => {
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-tool-'));
  try {
    const tau = JSON.parse(
      readFileSync(join(opts.root, 'test/fixtures/tool-outputs/tau-bench-gpt-4o-airline-historical.json'), 'utf8'),
    ) as { trial?: number }[];
    const file = join(dir, 'tau-bench.json');
    const out = createWriteStream(file);
    out.write('[');
    let n = 0;
    for (let k = 0; k < opts.copies; k++)
      for (const e of tau)
        if (!out.write((n++ > 0 ? ',' : '') + JSON.stringify({ ...e, trial: (e.trial ?? 0) + k * 10 })))
          await once(out, 'drain');
    out.end(']');
    await once(out, 'finish');
    const best = async (f: () => Promise<number>): Promise<number> => {
      let ms = Infinity;
      for (let i = 0; i < opts.runs; i++) {
        const t0 = performance.now();
        if ((await f()) !== n) throw new Error('bench toolStream: wrong trial count');
        ms = Math.min(ms, performance.now() - t0);
      }
      return ms;
    };
    const opt = { agentVersion: 'gpt-4o' };
    const wholeMs = await best(
      async () => parseResultsFile(file, await readFile(file, 'utf8'), 'tau-bench', opt).trials.length,
    );
    const streamedMs = await best(async () => {
      const source = await openToolFile(file, opt);
      let count = 0;
      for await (const _ of source.entries()) count++;
      return count;
    });
    opts.log(`toolStream: ${n} trials, ${(statSync(file).size / 1e6).toFixed(0)} MB`);
    return { bytes: statSync(file).size, trials: n, streamedMs, wholeMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
