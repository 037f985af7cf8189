import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';

/**
 * A `log.sqlite` that is not a passk log — empty (0 bytes), not a SQLite database, another application's
 * database — is refused with exit 3 and one line naming the file and the cause, and left byte for byte as it was.
 * Before, an empty one silently became a new empty log and a foreign one got the log's tables added.
 */
let dir: string;
let trials: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-log-files-'));
  trials = join(dir, 'trials.jsonl');
  writeFileSync(
    trials,
    '{"suite":"s","row_id":"r1","agent_version":"v1","dataset_version":"d1","run_id":"run-1","attempt":0,"passed":true}\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

const refusedWith = async (name: string, make: (file: string) => void, cause: string) => {
  const data = join(dir, name);
  mkdirSync(data);
  const file = join(data, 'log.sqlite');
  make(file);
  const before = digest(file);
  const r = await passk(['--data-dir', data, 'import', trials], { env: { NO_COLOR: '1' } });
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr.trim().split('\n')).toEqual([
    `passk: cannot open the embedded event log: ${file} ${cause}: refused, not replaced (move it away to start a new log, or restore it from a backup)`,
  ]);
  expect(digest(file)).toBe(before);
};

describe('a log.sqlite that is not a passk log is refused, not replaced', () => {
  it('a zero-length file', () =>
    refusedWith('empty', (f) => writeFileSync(f, ''), 'is empty (0 bytes), not a passk log'));

  it('a file that is not a SQLite database', () =>
    refusedWith('garbage', (f) => writeFileSync(f, Buffer.alloc(8192, 0x5a)), 'is not a SQLite database'));

  it("another application's SQLite database", () =>
    refusedWith(
      'foreign',
      (f) => {
        const db = new Database(f);
        db.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)');
        db.close();
      },
      "is another application's SQLite database (tables invoices)",
    ));

  it('a new data directory still gets a new log', async () => {
    const r = await passk(['--data-dir', join(dir, 'new'), 'import', trials], { env: { NO_COLOR: '1' } });
    expect(r.code, r.stderr).toBe(0);
  });
});
