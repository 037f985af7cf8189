import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';

/**
 * `passk import` onto a disk that fills up: exit 3 (backend unavailable), one line naming the cause and the log's
 * file, no stack trace, and a "not sent" count that is exactly what the log lacks. On a 3 MiB tmpfs the test mounts
 * (as root); where it cannot mount one, it says why and skips. Before, it exited 4 with a stack trace.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-import-full-'));
const mnt = join(dir, 'mnt');
let mounted = false;
let why = '';
const TRIALS = 3_000;

beforeAll(() => {
  const lines = Array.from({ length: TRIALS }, (_, i) =>
    JSON.stringify({
      suite: 's',
      dataset_version: 'd',
      row_id: `r${i}`,
      agent_version: 'a',
      run_id: 'run-1',
      attempt: 0,
      passed: true,
      output: `${'x'.repeat(2_000)}${i}`,
    }),
  );
  writeFileSync(join(dir, 'big.jsonl'), `${lines.join('\n')}\n`);
  why = mountTmpfs(mnt, '3m') ?? '';
  mounted = why === '';
});
afterAll(() => {
  if (mounted) execFileSync('umount', [mnt]);
  rmSync(dir, { recursive: true, force: true });
});

describe('passk import onto a full disk', () => {
  it('exits 3 with one line naming the cause and the file, and counts exactly what was not sent', async (ctx) => {
    if (!mounted) return ctx.skip(why);
    const data = join(mnt, 'data');
    const r = await passk(['--data-dir', data, 'import', join(dir, 'big.jsonl')], { env: { NO_COLOR: '1' } });
    expect(r.code, r.stderr).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const file = join(data, 'log.sqlite');
    const m = new RegExp(
      `^passk: (\\d+) events were not sent: ${file}: the disk is full; nothing was appended \\(free space and retry\\)$`,
    ).exec(lines[0]!);
    expect(m, lines[0]).not.toBeNull();
    const db = new Database(file, { readonly: true });
    const onDisk = (db.prepare("SELECT count(*) AS n FROM records WHERE topic = 'passk.trials'").get() as { n: number })
      .n;
    db.close();
    expect(onDisk).toBeGreaterThan(0); // some batches landed before the disk filled
    expect(Number(m![1]) + onDisk).toBe(TRIALS);
  });
});
