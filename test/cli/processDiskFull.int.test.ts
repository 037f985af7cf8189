import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';
import { cliFor } from '../helpers/cli.ts';
import { fill, mountTmpfs } from '../helpers/tmpfs.ts';

/**
 * `passk process` whose store's disk is full (when it opens the store, or while it writes): exit 3 (backend unavailable), one line naming the cause and the store's
 * directory, no stack trace, no owner file left. On a 40 MiB tmpfs the test mounts (as root); where it cannot mount
 * one, it says why and skips. Before, it exited 4 with chDB's stack trace.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-process-full-'));
const mnt = join(dir, 'mnt');
/** The second case's store directory: a tmpfs of its own, so the log (on the ordinary disk) keeps its space. */
const during = join(dir, 'during');
const duringStore = join(during, 'store');
let mounted = false;
let why = '';
let storeMounted = false;

beforeAll(() => {
  why = mountTmpfs(mnt, '40m') ?? '';
  mounted = why === '';
  storeMounted = mounted && mountTmpfs(duringStore, '40m') === undefined;
});
afterAll(() => {
  if (mounted) execFileSync('umount', [mnt]);
  if (storeMounted) execFileSync('umount', [duringStore]);
  rmSync(dir, { recursive: true, force: true });
});

const TRIALS = 'examples/public-trials';

describe('passk process on a full disk', () => {
  it('exits 3 with one line naming the cause and the store, and leaves no owner file', async (ctx) => {
    if (!mounted) return ctx.skip(why);
    const data = join(mnt, 'data');
    const imported = await passk(['--data-dir', data, 'import', 'examples/public-trials/tau_bench.jsonl']);
    expect(imported.code, imported.stderr).toBe(0);
    fill(mnt, 300 * 1024);
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

  it('fills while it writes: exit 3 with one line; once there is space the next run stores everything, to the same report', async (ctx) => {
    if (!storeMounted) return ctx.skip(why || 'cannot mount a second tmpfs');
    const { cli, ok } = cliFor({ dataDir: during, env: { NO_COLOR: '1' } });
    // a store that has processed one file; two more files wait in the log
    await ok('import', `${TRIALS}/tau_bench.jsonl`);
    await ok('process', '--until-caught-up');
    await ok('import', `${TRIALS}/neo_tau_bench.jsonl`);
    await ok('import', `${TRIALS}/tau2_bench_leaderboard.jsonl`);
    // chDB reserves 1 MiB per insert: just over that much free lets it open the store and write a little, then the
    // reservations fail while the processors write (the store's disk, not the log's, fills)
    const filler = fill(duringStore, 1024 * 1024 + 40 * 1024);
    const full = await cli('process', '--until-caught-up');
    expect(full.code, full.stderr).toBe(3);
    const lines = full.stderr
      .trim()
      .split('\n')
      .filter((l) => !/^passk process: (starting|started|\d+ records)/.test(l));
    expect(lines).toEqual([
      `passk: ${duringStore}: the disk is full (ClickHouse: NOT_ENOUGH_SPACE); nothing was written (free space and retry)`,
    ]);
    expect(existsSync(join(during, 'store.owner.json'))).toBe(false);
    // nothing it left behind breaks the next run: the uncommitted units are processed again, and the store equals
    // the offline report of the three files
    rmSync(filler);
    await ok('process', '--until-caught-up');
    await ok('check');
    const files = ['tau_bench', 'neo_tau_bench', 'tau2_bench_leaderboard'].map((f) => `${TRIALS}/${f}.jsonl`);
    const fromFiles = (await ok('report', '--json', ...files)).stdout;
    expect((await ok('report', '--json', '--from-store')).stdout).toBe(fromFiles);
  });
});
