import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-held-raw-'));
  const path = join(dir, 'store');
  mkdirSync(path);
  const code = `const { createChdbConnection } = require('chdb/connection'); createChdbConnection({ path: ${JSON.stringify(path)} }); console.log('ready'); setInterval(() => {}, 1000);`;
  holder = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    holder.on('exit', (c) => reject(new Error(`holder exited with ${c}`)));
  });
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
