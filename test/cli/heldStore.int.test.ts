import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk, ROOT } from '../browser/processes.ts';

/**
 * While `passk serve` holds the embedded store (chDB locks its directory), the read commands go through its
 * local HTTP API instead of failing with exit 3: report --from-store, dataset versions, review, export. And
 * `passk demo` refuses to empty a data directory that a live process holds.
 */
const TRIALS = 'test/fixtures/refunds-breaks-mnb.jsonl';
const DATASET = 'test/fixtures/own-agent/refunds.jsonl';
let dir: string;
let serve: ChildProcess;
// the data directory is <dir>/demo, where `passk --data-dir <dir> demo` would write
const env = () => ({ PASSK_DATA_DIR: join(dir, 'demo'), NO_COLOR: '1' });
const cli = (...args: string[]) => passk(args, { env: env() });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-held-'));
  serve = spawn(process.execPath, [join(ROOT, 'bin', 'passk.mjs'), 'serve', '--port', '0', '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...env() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('"url"')) resolve();
    });
    serve.once('close', (code) => reject(new Error(`passk serve exited ${code}`)));
  });
  expect((await cli('import', TRIALS)).code).toBe(0);
  expect((await cli('dataset', 'publish', DATASET, '--dataset', 'refunds')).code).toBe(0);
});
afterAll(async () => {
  if (serve.exitCode === null) {
    const closed = new Promise((r) => serve.once('close', r));
    serve.kill('SIGTERM');
    await closed;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('while passk serve holds the embedded store', () => {
  it('report --from-store reads through its local API and equals the report of the file', async () => {
    const file = JSON.parse((await cli('report', '--json', TRIALS)).stdout) as unknown;
    // the processors inside serve fold what was imported; poll until the store holds it all
    let last = { code: -1 as number | null, stdout: '', stderr: '' };
    for (let i = 0; i < 60; i++) {
      last = await cli('report', '--json', '--from-store');
      if (last.code === 0 && JSON.stringify(JSON.parse(last.stdout)) === JSON.stringify(file)) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(last.code, last.stderr).toBe(0);
    expect(JSON.parse(last.stdout)).toEqual(file);
  });

  it('dataset versions, review and export trials work too', async () => {
    const versions = await cli('dataset', 'versions', '--dataset', 'refunds', '--json');
    expect(versions.code, versions.stderr).toBe(0);
    expect(JSON.parse(versions.stdout)).toMatchObject({ versions: [{ added: expect.any(Array), rows: 6 }] });
    const review = await cli('review', '--json');
    expect(review.code, review.stderr).toBe(0);
    const exported = await cli('export', 'trials');
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout.trim().split('\n').length).toBe(66);
  });

  it('passk demo refuses to wipe a data directory a live process holds', async () => {
    const demo = await passk(['--data-dir', dir, 'demo', '--no-serve'], { env: { NO_COLOR: '1' } });
    expect(demo.code).toBe(3);
    expect(demo.stderr).toMatch(/is in use by passk serve \(pid \d+.*local API http:\/\/127\.0\.0\.1:\d+\/\)/);
    // nothing was wiped: the store still answers
    expect((await cli('report', '--from-store', '--json')).code).toBe(0);
  });
});
