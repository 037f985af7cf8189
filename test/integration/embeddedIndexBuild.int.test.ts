import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { trial } from '../helpers/events.ts';

/**
 * Issue 26: the first open of a log written before the indexes by key builds them in one write transaction (7–8 s per
 * 1M records); a writer in another process that opened the log meanwhile waited its busy timeout (10 s) and then failed
 * with SQLITE_BUSY. Here this test process plays the build (it holds the write lock and the build's marker,
 * `log.sqlite.index-build`, as the building open does) for longer than the writer's busy timeout (300 ms): the writer
 * must wait and append once the lock is released. A lock held by anything else still fails the writer after its busy
 * timeout, as before.
 */

const child = join(import.meta.dirname, '..', 'helpers', 'embeddedLogWriterChild.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const KEY_INDEXES = ['records_rowstate_by_key', 'records_decisions_by_key'];

/** A log with 30 trials, as a passk before the indexes by key left it. */
const oldLog = async (): Promise<string> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-index-build-'));
  dirs.push(dataDir);
  const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL' });
  await log.publisher.publish(Array.from({ length: 30 }, (_, seq) => trial({ seq })));
  await log.close();
  const raw = new Database(join(dataDir, 'log.sqlite'));
  for (const name of KEY_INDEXES) raw.exec(`DROP INDEX ${name}`);
  raw.close();
  return dataDir;
};

type Writer = { readonly stderr: () => string; readonly done: Promise<{ code: number | null; stdout: string }> };
const startWriter = (dataDir: string, busyTimeoutMs: number): Writer => {
  const p = spawn(process.execPath, ['--import', 'tsx', child, dataDir, String(busyTimeoutMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return {
    stderr: () => stderr,
    done: new Promise((resolve) => p.once('close', (code) => resolve({ code, stdout }))),
  };
};

/** Resolves when `said()` is true or the writer has exited, whichever is first (no time limit: vitest's own). */
const untilSaidOrExited = async (w: Writer, said: () => boolean): Promise<void> => {
  let exited = false;
  void w.done.then(() => (exited = true));
  while (!said() && !exited) await new Promise((r) => setTimeout(r, 20));
};

const trialsIn = (dataDir: string): number => {
  const db = new Database(join(dataDir, 'log.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM records WHERE topic = ?').get(TOPICS.trials) as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('a writer opening the embedded log while another process builds its indexes by key', () => {
  it('waits past its busy timeout for the build, then appends', async () => {
    const dataDir = await oldLog();
    const file = join(dataDir, 'log.sqlite');
    const builder = new Database(file);
    builder.exec('BEGIN IMMEDIATE');
    writeFileSync(`${file}.index-build`, JSON.stringify({ pid: process.pid, records: 30 }));
    const writer = startWriter(dataDir, 300);
    try {
      // said only once its BEGIN IMMEDIATE got SQLITE_BUSY, its 300 ms busy timeout out: the build outlasted it
      await untilSaidOrExited(writer, () => writer.stderr().includes(`waiting for process ${process.pid}`));
    } finally {
      builder.exec('COMMIT'); // as the build ends: its transaction, then its marker
      builder.close();
      rmSync(`${file}.index-build`, { force: true });
    }
    const { code, stdout } = await writer.done;
    expect(stdout).toMatch(/^appended /);
    expect(code).toBe(0);
    expect(trialsIn(dataDir)).toBe(31);
    expect(writer.stderr()).toContain(`waiting for process ${process.pid}, which is building the indexes by key`);
    // the writer's open built the indexes itself (the held "build" built none) and left no marker behind
    const db = new Database(file, { readonly: true });
    const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[];
    db.close();
    expect(indexes.map((i) => i.name)).toEqual(expect.arrayContaining(KEY_INDEXES));
    expect(existsSync(`${file}.index-build`)).toBe(false);
  });

  it('still fails with SQLITE_BUSY after its busy timeout when the lock is held by anything but an index build', async () => {
    const dataDir = await oldLog();
    const holder = new Database(join(dataDir, 'log.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    const writer = startWriter(dataDir, 300);
    let result: { code: number | null; stdout: string };
    try {
      result = await writer.done; // held until the writer gave up
    } finally {
      holder.exec('COMMIT');
      holder.close();
    }
    expect(result.stdout).toMatch(/^failed SQLITE_BUSY/);
    expect(result.code).toBe(1);
    expect(trialsIn(dataDir)).toBe(30);
  });
});
