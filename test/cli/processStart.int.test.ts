import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'passk-process-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('passk process says what it is doing before its first progress line', () => {
  it('starts by naming what it opens, then says it started, then summarizes', () => {
    const data = join(dir, 'data');
    const r = spawnSync(process.execPath, ['bin/passk.mjs', '--data-dir', data, 'process', '--until-caught-up'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 170_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe(
      `passk process: starting: opening the embedded log and store in ${data}, restoring the processors' state`,
    );
    expect(lines[1]).toBe('passk process: started: consuming trials, datasets and decisions until caught up');
    // an empty log: nothing folded, and said as such (not a count of nothing, nor "since the last run")
    expect(r.stdout).toMatch(
      /^passk process\nnothing to fold yet: no trial record has reached the log, 0 events decided\n/,
    );
  });
});
