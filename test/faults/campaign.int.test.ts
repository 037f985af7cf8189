import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

/**
 * The CI fault campaign: a fixed seed set on a three-node cluster in network namespaces (root only; the
 * cluster is its own, never the shared stack). Seed 7 found both bugs in docs/reliability.md: its first schedule
 * (7000022) the processor that hung after a NOT_COORDINATOR, its third (7015860) an evicted processor that folded
 * partitions it got back onto stale state. Both are timing-dependent; the second has a deterministic regression
 * test of its own (test/integration/kafkaEviction.int.test.ts).
 */
const SEED = 7;
const SCHEDULES = 3;

it(`fault campaign --seed ${SEED} --schedules ${SCHEDULES}: 0 lost, 0 duplicated, 0 divergent`, async () => {
  const before = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  expect(before.status, 'the campaign needs root and iproute2 (ip netns)').toBe(0);
  const root = join(import.meta.dirname, '..', '..');
  const proc = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'test/faults/campaign.ts'),
      '--seed',
      String(SEED),
      '--schedules',
      String(SCHEDULES),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  const lines = out.trimEnd().split('\n');
  expect(code, `${out}\n${err}`).toBe(0);
  expect(lines.filter((l) => /^#\d+ seed \d+: \d+ faults, \d+ acked/.test(l))).toHaveLength(SCHEDULES);
  const last = /^faults: (\d+) schedules, (\d+) brokers, (\d+) acknowledged, 0 lost, 0 duplicated, 0 divergent$/.exec(
    lines.at(-1) ?? '',
  );
  expect(last, out).not.toBeNull();
  expect(Number(last![1])).toBe(SCHEDULES);
  expect(Number(last![2])).toBe(3);
  expect(Number(last![3])).toBeGreaterThan(SCHEDULES * 200);
  expect(out).not.toContain('NO catch-up');
  expect(out).not.toContain('stop on SIGTERM');
  // everything it made is gone: no namespace, no bridge of the run
  const id = /faults: cluster ([0-9a-f]{4}) /.exec(err)?.[1];
  expect(id).toBeDefined();
  expect(spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout).not.toContain(`pk${id}`);
  expect(spawnSync('ip', ['link'], { encoding: 'utf8' }).stdout).not.toContain(`pk${id}`);
}, 900_000);
