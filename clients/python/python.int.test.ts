/**
 * The stdlib Python client, run by the machine's python3 against a real `passk ingest` (embedded log):
 * 1,000 trials and 200 traces land, re-sending them counts nothing twice, and a batch with 3 bad items gets those
 * 3 back with index, field and reason while the rest land.
 */
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const TOKEN = 'python-client-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'passk-py-'));
let server: ChildProcess;
let url = '';

beforeAll(async () => {
  server = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'passk.mjs'), '--data-dir', dir, 'ingest', '--port', '0', '--json'],
    {
      cwd: ROOT,
      env: { ...process.env, PASSK_INGEST_TOKEN: TOKEN, PASSK_BACKEND: 'embedded' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout! }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`passk ingest exited with ${code}`)));
  });
  url = (JSON.parse(first) as { url: string }).url;
}, 120_000);

afterAll(async () => {
  if (server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
  rmSync(dir, { recursive: true, force: true });
});

const count = (topic: string, where = ''): number => {
  const db = new Database(join(dir, 'log.sqlite'), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM records WHERE topic = ? ${where}`).get(topic) as { n: number }).n;
  } finally {
    db.close();
  }
};

it('records 1,000 trials and 200 traces from python3, once each, and reports 3 bad items', () => {
  const py = spawnSync('python3', [join(HERE, 'test_passk_client.py')], {
    env: { ...process.env, PASSK_URL: url, PASSK_INGEST_TOKEN: TOKEN },
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(py.stderr).toBe('');
  expect(py.status).toBe(0);
  const out = JSON.parse(py.stdout.trim().split('\n').pop()!);
  expect(out.first).toEqual({ accepted: 1200, duplicates: 0, rejected: [] });
  expect(out.again).toEqual({ accepted: 0, duplicates: 1200, rejected: [] });
  expect(out.bad).toMatchObject({ accepted: 47, duplicates: 0, rejected: 3 });
  const rejected = out.bad.items.filter((r: { status: string }) => r.status === 'rejected');
  expect(rejected.map((r: { index: number; field: string }) => [r.index, r.field])).toEqual([
    [3, 'passed'],
    [17, 'row_id'],
    [31, 'agent_version'],
  ]);
  for (const r of rejected) expect(r.reason).toMatch(/\w/);
  // 10,001 trials in one buffer: refused whole (413, over the item cap), sent again in halves, all accepted; the one
  // item over the body limit is reported once and dropped, so the next flush sends nothing.
  expect(out.split).toMatchObject({ accepted: 10_001, duplicates: 0 });
  expect(out.split.rejected).toEqual([
    expect.objectContaining({ kind: 'trials', field: '(request)', reason: expect.stringMatching(/HTTP 413/) }),
  ]);
  expect(out.after).toEqual({ accepted: 0, duplicates: 0, rejected: [] });
  // Exactly those events are in the log: 1,000 + 47 + 10,001 trials, 200 traces.
  expect(count('passk.trials')).toBe(11_048);
  expect(count('passk.traces')).toBe(200);
}, 300_000);
