import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  changelogState,
  decisionsOf,
  gateWorkload,
  embeddedBackend,
  kafkaBackend,
  publishAll,
  startChild,
  straightReplay,
  until,
  workload,
  type ProcessorsBackend,
} from '../helpers/processorsHarness.ts';

const backends: ProcessorsBackend[] = [
  embeddedBackend,
  kafkaBackend(inject('kafkaBrokers'), inject('schemaRegistryUrl')),
];
const disposers: (() => void)[] = [];
afterAll(() => disposers.forEach((d) => d()));

describe.each(backends)('processors on the $name', (backend) => {
  const fresh = () => {
    const b = backend.fresh();
    disposers.push(b.dispose);
    return b;
  };

  it('two instances in one group produce exactly the row states and gate decisions of one', async () => {
    const events = [...workload(300), ...gateWorkload(40)];
    // one instance, batch mode
    const single = fresh();
    const log1 = await single.open();
    await publishAll(log1, events);
    const one = startChild({ ...single.child, instanceId: 'solo', untilCaughtUp: true, maxBatch: 100 });
    expect(await one.exited).toBe(0);
    const expected = await changelogState(log1);
    expect(expected).toBe(await straightReplay(log1));
    const decisions = await decisionsOf(log1);
    expect(decisions).toHaveLength(2); // cmp-now's verdict, cmp-confirm's request (no runner here to confirm)
    expect(decisions.some((d) => d.includes('"cmp-now","fail"'))).toBe(true);
    await log1.close();

    // two instances sharing the group; the events arrive while both run
    const pair = fresh();
    const log2 = await pair.open();
    const a = startChild({ ...pair.child, instanceId: 'a', maxBatch: 50, maxWaitMs: 20 });
    const b = startChild({ ...pair.child, instanceId: 'b', maxBatch: 50, maxWaitMs: 20 });
    await until(
      () => a.owned().size > 0 && b.owned().size > 0 && a.owned().size + b.owned().size === 4,
      150_000,
      'the two instances to share the 4 partitions',
    );
    await publishAll(log2, events);
    const trials = events.filter((e) => e.type === 'TrialRecorded').length;
    await until(() => a.committed() + b.committed() >= trials, 150_000, 'both instances to commit every trial');
    await until(
      () => [...a.lines, ...b.lines].filter((l) => l.type === 'decision').length >= 2,
      150_000,
      'the gates to decide',
    );
    a.proc.kill('SIGTERM');
    b.proc.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
    expect(a.committed()).toBeGreaterThan(0);
    expect(b.committed()).toBeGreaterThan(0);
    expect(await changelogState(log2)).toBe(expected);
    expect(await decisionsOf(log2)).toEqual(decisions);
    await log2.close();
  }, 400_000);

  it('SIGKILL mid-batch, then a restart: no trial lost or counted twice (= one straight replay)', async () => {
    const events = workload(2_000);
    const env = fresh();
    const log = await env.open();
    await publishAll(log, events);
    const first = startChild({ ...env.child, instanceId: 'victim', maxBatch: 40, maxWaitMs: 5 });
    await until(() => first.committed() >= events.length / 4, 150_000, 'a quarter of the records committed');
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(first.committed()).toBeLessThan(events.length);
    const second = startChild({ ...env.child, instanceId: 'survivor', untilCaughtUp: true });
    expect(await second.exited).toBe(0);
    // the survivor re-read at most what the victim had not committed
    expect(second.committed()).toBeLessThanOrEqual(events.length - first.committed());
    expect(await changelogState(log)).toBe(await straightReplay(log));
    await log.close();
  }, 400_000);
});

describe('passk process (the command, embedded log)', () => {
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'passk.mjs');
  const passk = (dataDir: string, args: string[]) =>
    spawn(process.execPath, [bin, '--data-dir', dataDir, 'process', '--no-store', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const finished = (p: ReturnType<typeof passk>) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      let out = '';
      let err = '';
      p.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      p.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      p.once('exit', (code) => resolve({ code, out, err }));
    });

  it('stops cleanly on SIGTERM, committing what is durable; --until-caught-up then finishes and exits 0', async () => {
    const env = embeddedBackend.fresh();
    disposers.push(env.dispose);
    const log = await env.open();
    const events = workload(2_000);
    await publishAll(log, events);
    const running = passk(env.child.dataDir, []);
    const first = finished(running);
    let progress = '';
    running.stderr!.on('data', (c: Buffer) => (progress += c.toString()));
    await until(() => /records, \d+ trials durable and committed/.test(progress), 150_000, 'the first progress line');
    running.kill('SIGTERM');
    const stopped = await first;
    expect(stopped.code).toBe(0);
    expect(stopped.err).toContain('SIGTERM: finishing what is in flight');
    const batch = await finished(passk(env.child.dataDir, ['--until-caught-up', '--json']));
    expect(batch.code).toBe(0);
    const summary = JSON.parse(batch.out) as { lag: number; versions: { rows: number }[] };
    expect(summary.lag).toBe(0);
    expect(await changelogState(log)).toBe(await straightReplay(log));
    await log.close();
  }, 400_000);
});
