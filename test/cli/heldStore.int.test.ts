import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('a file that drops rows publishes a version that removes them: versions lists the ids, export leaves them out', async () => {
    const rows = readFileSync(join(ROOT, DATASET), 'utf8').trim().split('\n');
    // q3 and q6 dropped; q1 gains expected checks
    const q1 = { ...(JSON.parse(rows[0]!) as object), expected_checks: { receipt: true, return_window: true } };
    const smaller = join(dir, 'refunds-v2.jsonl');
    writeFileSync(smaller, [JSON.stringify(q1), rows[1], rows[3], rows[4]].join('\n') + '\n');
    const published = await cli('dataset', 'publish', smaller, '--dataset', 'refunds', '--version', 'v2', '--json');
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ published: 3, changed: ['q1'], removed: ['q3', 'q6'] });

    const versions = await cli('dataset', 'versions', '--dataset', 'refunds');
    expect(versions.code, versions.stderr).toBe(0);
    expect(versions.stdout).toMatch(/\bv2\b.*2 \(q3, q6\)/);
    const json = JSON.parse((await cli('dataset', 'versions', '--dataset', 'refunds', '--json')).stdout) as {
      versions: { dataset_version: string; changed: string[]; removed: string[]; rows: number }[];
    };
    expect(json.versions.at(-1)).toMatchObject({
      dataset_version: 'v2',
      changed: ['q1'],
      removed: ['q3', 'q6'],
      rows: 4,
    });

    // the processors inside serve write the tombstones to the store; export reads it through serve's API
    let exported: { id: string; expected_checks?: object }[] = [];
    for (let i = 0; i < 60 && exported.length !== 4; i++) {
      const r = await cli('dataset', 'export', '--dataset', 'refunds', '--version', 'v2');
      if (r.code === 0)
        exported = r.stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as never);
      if (exported.length !== 4) await new Promise((res) => setTimeout(res, 1_000));
    }
    expect(exported.map((r) => r.id)).toEqual(['q1', 'q2', 'q4', 'q5']);
    expect(exported[0]!.expected_checks).toEqual({ receipt: true, return_window: true });
    const first = await cli('dataset', 'export', '--dataset', 'refunds', '--version', '1');
    expect(first.stdout.trim().split('\n')).toHaveLength(6);

    // the export round-trips: publishing it again is the same version (the one run --dataset would pin)
    const file = join(dir, 'exported.jsonl');
    writeFileSync(file, exported.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const again = await cli('dataset', 'publish', file, '--dataset', 'refunds', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ dataset_version: 'v2', published: 0 });
  });

  it('passk demo refuses to wipe a data directory a live process holds', async () => {
    const demo = await passk(['--data-dir', dir, 'demo', '--no-serve'], { env: { NO_COLOR: '1' } });
    expect(demo.code).toBe(3);
    expect(demo.stderr).toMatch(/is in use by passk serve \(pid \d+.*local API http:\/\/127\.0\.0\.1:\d+\/\)/);
    // nothing was wiped: the store still answers
    expect((await cli('report', '--from-store', '--json')).code).toBe(0);
  });
});
