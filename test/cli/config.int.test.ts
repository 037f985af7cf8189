import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/** `passk config` through the CLI, in a directory of its own (its own passk.config.json), with a clean environment. */
const BIN = fileURLToPath(new URL('../../bin/passk.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'passk-config-'));
const clean = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(PASSK_|KAFKA_|SCHEMA_REGISTRY|CLICKHOUSE_)/.test(k)),
);
type Run = { code: number; stdout: string; stderr: string };
const passk = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: dir, env: { ...clean, NO_COLOR: '1', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
type Settings = { file: string | null; settings: { key: string; value: unknown; source: string }[] };
const byKey = (r: Run) =>
  Object.fromEntries((JSON.parse(r.stdout) as Settings).settings.map((s) => [s.key, [s.value, s.source]]));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('passk config', () => {
  it('says where each value came from: flag over env over file over default, with secrets masked', async () => {
    writeFileSync(
      join(dir, 'passk.config.json'),
      JSON.stringify({
        backend: 'kafka',
        dataDir: './from-file',
        maxEventBytes: 5000,
        clickhouse: { url: 'http://ch:8123', password: 's3cret' },
      }),
    );
    const r = await passk(['--data-dir', '/tmp/from-flag', 'config', '--json'], {
      PASSK_BACKEND: 'embedded',
      KAFKA_BROKERS: 'k1:9092,k2:9092',
      SCHEMA_REGISTRY_URL: 'http://reg:8081',
    });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Settings).file).toBe(join(dir, 'passk.config.json'));
    const s = byKey(r);
    expect(s.backend).toEqual(['embedded', 'env']);
    expect(s.dataDir).toEqual(['/tmp/from-flag', 'flag']);
    expect(s['kafka.brokers']).toEqual([['k1:9092', 'k2:9092'], 'env']);
    expect(s.maxEventBytes).toEqual([5000, 'file']);
    expect(s['clickhouse.url']).toEqual(['http://ch:8123', 'file']);
    expect(s['clickhouse.password']).toEqual(['***', 'file']);
    expect(s['clickhouse.database']).toEqual(['passk', 'default']);
    expect(r.stdout).not.toContain('s3cret');
    rmSync(join(dir, 'passk.config.json'));
  });

  it('prints a table, and exits 2 naming the setting when the configuration is invalid', async () => {
    const table = await passk(['config']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/backend\s+│\s+embedded\s+│\s+default/);
    const bad = await passk(['config'], { PASSK_BACKEND: 'kafka' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('kafka: PASSK_BACKEND=kafka needs KAFKA_BROKERS and SCHEMA_REGISTRY_URL');
  });
});
