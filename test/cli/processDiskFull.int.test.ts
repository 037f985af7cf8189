import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';

/**
 * `passk process` whose store's disk is full: exit 3 (backend unavailable), one line naming the cause and the store's
 * directory, no stack trace, no owner file left. On a 40 MiB tmpfs the test mounts (as root); where it cannot mount
 * one, it says why and skips. Before, it exited 4 with chDB's stack trace.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-process-full-'));
const mnt = join(dir, 'mnt');
let mounted = false;
let why = '';

beforeAll(() => {
  why = mountTmpfs(mnt, '40m') ?? '';
  mounted = why === '';
});
afterAll(() => {
  if (mounted) execFileSync('umount', [mnt]);
  rmSync(dir, { recursive: true, force: true });
});

describe('passk process on a full disk', () => {
  it('exits 3 with one line naming the cause and the store, and leaves no owner file', async (ctx) => {
    if (!mounted) return ctx.skip(why);
    const data = join(mnt, 'data');
    const imported = await passk(['--data-dir', data, 'import', 'examples/public-trials/tau_bench.jsonl']);
    expect(imported.code, imported.stderr).toBe(0);
    const fs = statfsSync(mnt);
    writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, fs.bavail * fs.bsize - 300 * 1024)));
    const r = await passk(['--data-dir', data, 'process', '--until-caught-up'], { env: { NO_COLOR: '1' } });
    expect(r.code, r.stderr).toBe(3);
    const errors = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('passk process: starting'));
    expect(errors).toEqual([
      `passk: ${join(data, 'store')}: the disk is full (ClickHouse: NOT_ENOUGH_SPACE); nothing was written (free space and retry)`,
    ]);
    expect(existsSync(join(data, 'store.owner.json'))).toBe(false);
  });
});
