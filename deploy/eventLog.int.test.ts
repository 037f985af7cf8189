import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { openEventLog } from './eventLog.ts';

describe('openEventLog', () => {
  it('opens the embedded log in the data directory by default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-openlog-'));
    try {
      const log = await openEventLog(loadConfig({}, { PASSK_DATA_DIR: dir }, dir));
      expect(existsSync(join(dir, 'log.sqlite'))).toBe(true);
      expect(await log.deadLetters()).toEqual([]);
      await log.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
