import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog, partitionOf } from '../../log/index.ts';
import type { EventLog, LogEvent } from '../../processors/ports.ts';
import { TOPICS, keyOf } from '../../schemas/topics.ts';
import { trial } from '../helpers/events.ts';

const child = join(import.meta.dirname, '..', 'helpers', 'embeddedLogChild.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'passk-log-proc-'));
  dirs.push(d);
  return d;
};

const start = (args: string[]): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', child, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });

const exited = (p: ChildProcess): Promise<number | null> =>
  new Promise((resolve) =>
    p.exitCode !== null || p.signalCode !== null ? resolve(p.exitCode) : p.once('exit', (code) => resolve(code)),
  );

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []);
const acked = (file: string) => lines(file).flatMap((l) => (l.startsWith('A ') ? [l.slice(2)] : []));
/** Last commit the child saw resolve, per partition. */
const commits = (file: string) => {
  const m = new Map<number, number>();
  for (const l of lines(file)) {
    const [tag, p, o] = l.split(' ');
    if (tag === 'C') m.set(Number(p), Math.max(m.get(Number(p)) ?? 0, Number(o)));
  }
  return m;
};

/** Reads everything in the topic with a fresh group, then closes that consumer. */
const readAll = async (log: EventLog, groupId: string): Promise<LogEvent[]> => {
  const consumer = await log.consumer({ groupId, topics: [TOPICS.trials], maxBatch: 5_000 });
  const events: LogEvent[] = [];
  for await (const b of consumer.batches()) {
    events.push(...b.events);
    await consumer.commit([{ topic: b.topic, partition: b.partition, nextOffset: b.lastOffset + 1 }]);
    if ((await consumer.lag()).filter((l) => l.topic === TOPICS.trials).every((l) => l.lag === 0)) break;
  }
  await consumer.close();
  return events;
};

describe('embedded log across processes', () => {
  it('loses no acknowledged append and replays no committed record when the writer is killed with SIGKILL', async () => {
    const dataDir = freshDir();
    for (let round = 0; round < 3; round++) {
      const ackFile = join(dataDir, `acks-${round}.txt`);
      const proc = start([dataDir, ackFile, `p${round}`, 'forever', 'consume']);
      // let it write (and commit) for a while, then kill it mid-stream
      const t0 = Date.now();
      while (acked(ackFile).length < 300 + round * 100 || commits(ackFile).size < 2) {
        if (Date.now() - t0 > 60_000) throw new Error('the child did not get going');
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 37 * (round + 1)));
      proc.kill('SIGKILL');
      await exited(proc);
      expect(proc.signalCode).toBe('SIGKILL');

      const db = new Database(join(dataDir, 'log.sqlite'), { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();

      const log = createEmbeddedEventLog({ dataDir, consumer: { pollMs: 10, heartbeatMs: 100 } });
      try {
        const all = new Set((await readAll(log, `verify-${round}`)).map((e) => e.event.event_id));
        const ackedIds = acked(ackFile);
        expect(ackedIds.length).toBeGreaterThan(0);
        for (const id of ackedIds) expect(all.has(id), `acked ${id} is in the log`).toBe(true);

        // the killed member's partitions are taken over at once (its process is gone), at the committed positions
        const seenCommits = commits(ackFile);
        const consumer = await log.consumer({ groupId: 'crash', topics: [TOPICS.trials] });
        const durable = await consumer.committed(TOPICS.trials);
        for (const [partition, offset] of seenCommits) expect(durable.get(partition)).toBeGreaterThanOrEqual(offset);
        // one new record in every partition, so each partition has something after its commit
        const keys = new Map<number, string>();
        for (let i = 0; keys.size < 4; i++) keys.set(partitionOf(keyOf(trial({ row_id: `row-${i}` })), 4), `row-${i}`);
        await log.publisher.publish(
          [...keys.values()].map((row, i) => trial({ seq: 90_000 + round * 10 + i, row_id: row })),
        );
        const behind = (await consumer.lag()).filter((l) => l.lag > 0).map((l) => l.partition);
        expect(behind).toHaveLength(4);
        const first = new Map<number, number>();
        const it = consumer.batches()[Symbol.asyncIterator]();
        while (first.size < behind.length) {
          const r = await it.next();
          if (r.done) break;
          const b = r.value;
          if (!first.has(b.partition)) first.set(b.partition, b.events[0]?.offset ?? b.lastOffset);
          for (const e of b.events) expect(e.offset).toBeGreaterThanOrEqual(durable.get(b.partition) ?? 0);
        }
        // each partition resumes exactly at its durable commit: nothing committed is replayed
        expect([...first.keys()].sort()).toEqual([...behind].sort());
        for (const [partition, offset] of first) expect(offset).toBe(durable.get(partition) ?? 0);
        await consumer.close();
      } finally {
        await log.close();
      }
    }
  });

  it('takes appends from several processes at once, keeping each producer’s per-key order', async () => {
    const dataDir = freshDir();
    const n = 1_500;
    const procs = ['a', 'b', 'c'].map((p) => ({
      p,
      ackFile: join(dataDir, `acks-${p}.txt`),
      proc: start([dataDir, join(dataDir, `acks-${p}.txt`), p, String(n)]),
    }));
    const codes = await Promise.all(procs.map((x) => exited(x.proc)));
    expect(codes).toEqual([0, 0, 0]);
    const log = createEmbeddedEventLog({ dataDir, consumer: { pollMs: 10 } });
    try {
      const events = await readAll(log, 'verify');
      expect(events).toHaveLength(3 * n);
      for (const { p, ackFile } of procs) {
        const mine = events.filter((e) => e.event.producer === `child/${p}`);
        expect(mine).toHaveLength(n);
        expect(new Set(mine.map((e) => e.event.event_id))).toEqual(new Set(acked(ackFile)));
        const attemptsByKey = new Map<string, number[]>();
        for (const e of mine)
          attemptsByKey.set(e.key, [
            ...(attemptsByKey.get(e.key) ?? []),
            e.event.type === 'TrialRecorded' ? e.event.attempt : -1,
          ]);
        for (const attempts of attemptsByKey.values()) expect(attempts).toEqual([...attempts].sort((x, y) => x - y));
      }
    } finally {
      await log.close();
    }
  });
});
