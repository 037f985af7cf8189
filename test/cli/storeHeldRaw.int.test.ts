import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeHolder } from '../../deploy/storeOwner.ts';
import { passk } from '../browser/processes.ts';

/**
 * A store held by a process that has written no owner file (deploy/storeOwner.ts): a `passk process` in its first
 * seconds, before its local API is up, a `report --from-store`, an app with the store open. Before, a second
 * `passk process` printed chDB's raw "Code: 76. DB::Exception: Cannot lock file …/status …" line (161 columns)
 * before passk's own message; now the holder's pid in chDB's status file is read first, and only passk's message,
 * fitted to 80 columns, is printed.
 */
let dir: string;
let holder: ChildProcess;

/** A Node process holding the embedded store in `path` open (chDB locks `<path>/status` and writes its pid there). */
const holdStore = async (path: string): Promise<ChildProcess> => {
  const code = `const { createChdbConnection } = require('chdb/connection'); createChdbConnection({ path: ${JSON.stringify(path)} }); console.log('ready'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.on('exit', (c) => reject(new Error(`holder exited with ${c}`)));
  });
  return child;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-held-raw-'));
  const path = join(dir, 'store');
  mkdirSync(path);
  holder = await holdStore(path);
});
afterAll(() => {
  holder.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe('a store held without an owner file', () => {
  it.each([
    ['process', '--until-caught-up'],
    ['check', '--json'],
  ])('passk %s says so in its own message only, exit 3', async (...args) => {
    const r = await passk(['--data-dir', dir, ...args], { env: { NO_COLOR: '1' } });
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(/DB::Exception|Cannot lock file|Code: 76/);
    // (the start line names the data directory, which is longer than 80 columns here)
    const said = r.stderr.split('\n').filter((l) => !l.startsWith('passk process: starting'));
    expect(said.filter((l) => [...l].length > 80)).toEqual([]);
    expect(r.stderr.replace(/\s+/g, ' ')).toContain(
      `passk: the store in ${dir} is held by another passk process (pid ${holder.pid}): wait for it to finish`,
    );
  });
});

/**
 * chDB's status file left by a holder that was killed (SIGKILL: no clean close removes it), its pid since taken by an
 * unrelated live process whose command line says "node" (node_exporter, nodemon, …). Before, that pid blocked the
 * store ("held by another passk process (pid …)"), and `demo` refused to empty the directory; only a lock on the
 * file (/proc/locks) is believed now.
 */
describe('a status file left by a killed holder, its pid now an unrelated node process', () => {
  let stale: string;
  let unrelated: ChildProcess;
  beforeAll(async () => {
    stale = mkdtempSync(join(tmpdir(), 'passk-stale-status-'));
    const path = join(stale, 'store');
    mkdirSync(path);
    const killed = await holdStore(path);
    await new Promise((resolve) => {
      killed.on('exit', resolve);
      killed.kill('SIGKILL');
    });
    const status = join(path, 'status');
    expect(existsSync(status)).toBe(true);
    unrelated = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e3)'], { stdio: 'ignore' });
    await new Promise((resolve) => unrelated.on('spawn', resolve));
    // the pid reused: the unrelated process's, in the file the killed holder left
    writeFileSync(status, readFileSync(status, 'utf8').replace(/^PID:\s*\d+/m, `PID: ${unrelated.pid}`));
  });
  afterAll(() => {
    unrelated.kill();
    rmSync(stale, { recursive: true, force: true });
  });

  it('does not block the store: passk process opens it', async () => {
    const r = await passk(['--data-dir', stale, 'process', '--until-caught-up'], { env: { NO_COLOR: '1' } });
    expect(r.stderr).not.toContain('is held by');
    expect(r.code).toBe(0);
  });

  it('does not stop the demo from emptying its directory', () => {
    expect(storeHolder(stale)).toBeUndefined();
  });
});
