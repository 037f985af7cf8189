import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { cliFor } from '../helpers/cli.ts';
import { changelogState } from '../helpers/processorsHarness.ts';
import { fill, mountTmpfs } from '../helpers/tmpfs.ts';

/**
 * On Kafka a unit's store write and its changelog publish run at the same time (processors/operators/writeAndEmit.ts),
 * so a store that fails mid-stream can leave the changelog ahead of it: rows a restart restores from the changelog,
 * whose trials then change nothing when they are read again. The restart repairs the store from those records
 * (docs/reliability.md, "The store behind the changelog"). A real fault at the store's real boundary: its disk (a
 * 40 MiB tmpfs the test mounts, as root) fills while `passk process` writes; the log is Kafka's. After the restart,
 * `passk check` is satisfied and `report --from-store` equals the offline report of the same files.
 */
const TRIALS = 'examples/public-trials';
const FILES = ['tau_bench', 'neo_tau_bench', 'tau2_bench_leaderboard'].map((f) => `${TRIALS}/${f}.jsonl`);
const dir = mkdtempSync(join(tmpdir(), 'passk-store-repair-'));
const data = join(dir, 'data');
const store = join(data, 'store');
let why: string | undefined;

beforeAll(() => {
  why = mountTmpfs(store, '40m');
});
afterAll(() => {
  if (why === undefined) execFileSync('umount', [store]);
  rmSync(dir, { recursive: true, force: true });
});

type Numbers = { trials: number; ungraded: number } | { invalid: unknown } | null;

describe('the store behind the changelog on Kafka', () => {
  it('a store whose disk fills mid-stream: the changelog runs ahead of it, and the restart brings the store up to it', async (ctx) => {
    if (why !== undefined) return ctx.skip(why);
    const brokers = inject('kafkaBrokers');
    const registry = inject('schemaRegistryUrl');
    const namespace = `passk-repair-${randomBytes(4).toString('hex')}.`;
    const env = {
      NO_COLOR: '1',
      PASSK_BACKEND: 'kafka',
      KAFKA_BROKERS: brokers,
      SCHEMA_REGISTRY_URL: registry,
      PASSK_KAFKA_NAMESPACE: namespace,
      CLICKHOUSE_URL: '',
    };
    const { cli, ok } = cliFor({ dataDir: data, env, timeoutMs: 240_000 });
    // a store that has processed one file; two more wait in the log
    await ok('import', FILES[0]!);
    await ok('process', '--until-caught-up');
    await ok('import', FILES[1]!, FILES[2]!);
    // chDB reserves 1 MiB per insert: half of that free lets it open the store, and every insert of the unit fails
    // (with a little over 1 MiB one table's insert could land and the other's not: a lost part, which the start's
    // drift check rebuilds from the whole log)
    const filler = fill(store, 512 * 1024);
    const full = await cli('process', '--until-caught-up');
    expect(full.code, full.stderr).toBe(3);
    expect(full.stderr).toContain('the disk is full');
    rmSync(filler);

    // the changelog holds attempts the store's row_state does not (while `passk check` is satisfied: both tables lack
    // them): a restart restores them, and their trials, read again, change no row
    const log = await openEventLog(
      PasskConfig.parse({ backend: 'kafka', kafka: { brokers: brokers.split(','), schemaRegistryUrl: registry } }),
      { namespace },
    );
    const inChangelog = async () =>
      (JSON.parse(await changelogState(log)) as { n: number; ungraded: number }[]).reduce(
        (a, r) => a + r.n + r.ungraded,
        0,
      );
    const attemptsIn = async () => {
      const r = await cli('check', '--json');
      const report = JSON.parse(r.stdout) as { checked: { from_row_state: Numbers }[] };
      return report.checked.reduce(
        (a, v) =>
          a +
          (v.from_row_state && 'trials' in v.from_row_state ? v.from_row_state.trials + v.from_row_state.ungraded : 0),
        0,
      );
    };
    try {
      expect(await attemptsIn()).toBeLessThan(await inChangelog());

      // the restart repairs the store from the records it reads again, before committing them
      const restart = await ok('process', '--until-caught-up');
      // the repair, not a rebuild of the whole store: the failed unit left no table partly written, so the start's
      // drift check (ledger, totals) saw nothing, as `passk check` did not
      expect(restart.stderr).not.toContain('rebuild');
      await ok('check');
      expect(await attemptsIn()).toBe(await inChangelog());
    } finally {
      await log.close();
    }
    const fromFiles = (await ok('report', '--json', ...FILES)).stdout;
    expect((await ok('report', '--json', '--from-store')).stdout).toBe(fromFiles);
  }, 600_000);
});
