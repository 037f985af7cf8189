import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFor } from '../helpers/cli.ts';

/**
 * The store is a projection of the log (docs/reliability.md, "What rebuilds from what"): whatever the store loses —
 * its directory, a part of a table, its metadata — or never got (`passk process --no-store`), `passk check` says so
 * and names the mend (exit 1), and `passk process` (or `passk rebuild`) replays the log into it, to the same report
 * byte for byte. Real CLI, embedded log, real chDB.
 */
const TAU = 'examples/public-trials/tau_bench.jsonl';
const SUITES = ['--suite', 'airline', '--suite', 'retail'];

let dir: string;
let base: string;
let fromFile: string;
let fromStore: string;
let cases = 0;

const cli = (data: string, ...args: string[]) => cliFor({ dataDir: data, env: { NO_COLOR: '1' } }).cli(...args);
const ok = (data: string, ...args: string[]) => cliFor({ dataDir: data, env: { NO_COLOR: '1' } }).ok(...args);
const storeReport = async (data: string) => (await ok(data, 'report', '--json', '--from-store', ...SUITES)).stdout;
/** A copy of the processed data directory (log and store), for one case. */
const copy = (): string => {
  const to = join(dir, `case-${++cases}`);
  cpSync(base, to, { recursive: true });
  return to;
};
/** The data directories of a table's parts in the embedded store (the table's UUID is in its metadata). */
const partsOf = (data: string, table: string): string[] => {
  const uuid = /UUID '([0-9a-f-]+)'/.exec(
    readFileSync(join(data, 'store', 'metadata', 'passk', `${table}.sql`), 'utf8'),
  )![1]!;
  const at = join(data, 'store', 'store', uuid.slice(0, 3), uuid);
  return readdirSync(at)
    .filter((f) => /^[0-9a-z]+_\d+_\d+_\d+/.test(f))
    .map((f) => join(at, f));
};
/** `passk check` sees the loss and names the mend. */
const checkSaysRebuild = async (data: string) => {
  const r = await cli(data, 'check');
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stdout).toContain(`mend it: npx passk --data-dir ${data} rebuild`);
};
/** `passk process` rebuilds the store at start, to the same report; `check` is satisfied again. Returns the report. */
const processRebuilds = async (data: string): Promise<string> => {
  const r = await ok(data, 'process', '--until-caught-up');
  expect(r.stderr).toContain('rebuilding it from the log first');
  expect(r.stderr).toMatch(/store rebuilt from the log: \d+ records, 660 trials\n/);
  const report = await storeReport(data);
  expect(report).toBe(fromStore);
  await ok(data, 'check');
  return report;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-rebuild-'));
  base = join(dir, 'base');
  await ok(base, 'import', TAU);
  await ok(base, 'process', '--until-caught-up');
  fromFile = (await ok(base, 'report', '--json', TAU)).stdout;
  fromStore = await storeReport(base);
  expect(fromStore).toBe(fromFile);
  await ok(base, 'check');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the store rebuilds from the log', () => {
  it('a deleted store directory: check says so, process replays the log into a new one', async () => {
    const data = copy();
    rmSync(join(data, 'store'), { recursive: true });
    await checkSaysRebuild(data);
    await processRebuilds(data);
  });

  it('a lost part of trials: report was wrong, check says so, process replays the log', async () => {
    const data = copy();
    const parts = partsOf(data, 'trials');
    expect(parts.length).toBeGreaterThan(0);
    for (const p of parts) rmSync(p, { recursive: true });
    const wrong = await cli(data, 'report', '--json', '--from-store', ...SUITES);
    expect(wrong.stdout).not.toBe(fromStore);
    await checkSaysRebuild(data);
    await processRebuilds(data);
  });

  it('a lost part of row_state and of version_summaries', async () => {
    const data = copy();
    for (const table of ['row_state', 'version_summaries'])
      for (const p of partsOf(data, table)) rmSync(p, { recursive: true });
    await checkSaysRebuild(data);
    await processRebuilds(data);
  });

  it('lost metadata: the tables come back empty, process replays the log', async () => {
    const data = copy();
    rmSync(join(data, 'store', 'metadata'), { recursive: true });
    await checkSaysRebuild(data);
    await processRebuilds(data);
  });

  it('passk process --no-store first: the store is not starved', async () => {
    const data = join(dir, 'no-store');
    await ok(data, 'import', TAU);
    await ok(data, 'process', '--until-caught-up', '--no-store');
    await checkSaysRebuild(data);
    // the store's report after the rebuild (the one processRebuilds read) is the file's: one CLI start less
    expect(await processRebuilds(data)).toBe(fromFile);
  });

  it('passk rebuild: replays the log on demand, says what it mended, and changes nothing when whole', async () => {
    const data = copy();
    rmSync(join(data, 'store'), { recursive: true });
    const r = await ok(data, 'rebuild', '--json');
    expect(r.stderr).toContain('passk-trials: 662 record(s) of passk.trials processed, not in the store');
    const out = JSON.parse(r.stdout) as { ok: boolean; trials: number; before: { behind: unknown[] } };
    expect(out).toMatchObject({ ok: true, trials: 660 });
    expect(out.before.behind.length).toBeGreaterThan(0);
    expect(await storeReport(data)).toBe(fromStore);
    await ok(data, 'check');
    const again = await ok(data, 'rebuild');
    expect(again.stdout).toContain('consistent: 660 trials');
    expect(await storeReport(data)).toBe(fromStore);
    // nothing lacking: process does not replay the log again
    const p = await ok(data, 'process', '--until-caught-up');
    expect(p.stderr).not.toContain('rebuilding');
  });
});
