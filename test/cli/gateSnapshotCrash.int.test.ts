import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { createRng } from '../../processors/core/prng.ts';
import {
  emptyPrefix,
  emptyShelf,
  foldPrefix,
  joinChunks,
  restorePrefix,
  shelve,
  type DecisionsPrefix,
} from '../../processors/folds/gateSnapshot.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { GateEvaluated, PasskEvent } from '../../schemas/events/index.ts';
import { candidateKey, TOPICS } from '../../schemas/topics.ts';
import { passk, ROOT } from '../browser/processes.ts';

/**
 * Issue 26, item 6, on the embedded backend: the gates snapshot their partitions of passk.decisions (every 2
 * records here) and restore from the latest snapshot plus the records after it. `passk process` is killed with
 * SIGKILL at random moments (starting, restoring, deciding, writing a snapshot) while comparisons are declared,
 * and restarted; then a clean run catches up. Every comparison is decided once (a restore never forgets a verdict
 * and decides it again), each live verdict is `gate --from-store`'s, and every partition's latest snapshot plus the
 * records after it is the full replay of the partition; the clean stop's snapshot covers each partition to its end.
 * The seed also picks the mode: an even seed runs as shipped (no horizon), an odd one under a 30-day horizon
 * (`PASSK_GATE_HORIZON_DAYS`), which every snapshot then carries; both fold the same way here, as nothing is old
 * enough to leave it (the horizon's own pruning is `gateHorizon.unit`'s property). Without a horizon the embedded
 * log's gates forget decided ids (they look them up in passk.decisions by key): its snapshots say so, and the replay
 * they are compared with folds the same way.
 */
const SEED = Number(process.env.PASSK_TEST_SEED ?? Date.now() % 1_000_000);
const VERSIONS = ['v0', 'v1', 'v2', 'v3', 'v4', 'v5'];
const HORIZON_DAYS = SEED % 2 === 0 ? 0 : 30;
const HORIZON = HORIZON_DAYS * 86_400_000;
/** The embedded log's gates forget decided ids without a horizon (`forgetDecided`). */
const FORGET = HORIZON === 0;
const ENV = { NO_COLOR: '1', PASSK_GATE_SNAPSHOT_EVERY: '2', PASSK_GATE_HORIZON_DAYS: String(HORIZON_DAYS) };

/** 6 rows × 3 attempts per version: rows 0-2 pass everywhere (no confirmation asked), the others alternate. */
const trials = (): string => {
  const lines: string[] = [];
  VERSIONS.forEach((v, i) => {
    for (let row = 0; row < 6; row++)
      for (let a = 0; a < 3; a++)
        lines.push(
          JSON.stringify({
            suite: 'snap',
            dataset_version: 's1',
            row_id: `r${row}`,
            agent_version: v,
            run_id: `run-${v}`,
            attempt: a,
            passed: row < 3 || (a + row + i) % 2 === 0,
            output: 'x',
            expected: 'x',
            tags: row < 2 ? ['must_not_break'] : [],
          }),
        );
  });
  return `${lines.join('\n')}\n`;
};

const dir = mkdtempSync(join(tmpdir(), 'passk-gate-snapshot-'));
const dataDir = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => passk(['--data-dir', dataDir, ...args], { env: ENV, timeoutMs: 200_000 });

/** `passk process`, killed with SIGKILL `afterMs` after it said it started (or after it was spawned). */
const crash = async (afterMs: number, afterStarted: boolean): Promise<void> => {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'passk.mjs'), '--data-dir', dataDir, 'process'], {
    cwd: ROOT,
    env: { ...process.env, ...ENV },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const closed = once(child, 'close');
  let err = '';
  const started = new Promise<void>((resolve) => {
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      if (err.includes('passk process: started')) resolve();
    });
    void closed.then(() => resolve());
  });
  if (afterStarted) await started;
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  child.kill('SIGKILL');
  await closed;
};

/** Every record of passk.decisions by partition, and the latest gate book snapshot of each partition. */
const readLog = async () => {
  const log = await openEventLog(PasskConfig.parse({ dataDir }));
  try {
    const decisions = new Map<number, { offset: number; event: PasskEvent }[]>();
    await readToEnd(log, {
      topic: TOPICS.decisions,
      groupId: 'test.gate-snapshot.decisions',
      onEvent: (event, p, offset) => void (decisions.get(p) ?? decisions.set(p, []).get(p)!).push({ offset, event }),
    });
    const shelf = emptyShelf();
    // every snapshot written whole, and every chunked one whose chunks were all written (a kill may cut a set short)
    const written: GateBookSnapshot[] = [];
    const chunks = new Map<string, GateBookSnapshot[]>();
    await readToEnd(log, {
      topic: TOPICS.rowstate,
      groupId: 'test.gate-snapshot.rowstate',
      onEvent: (e) => {
        if (e.type !== 'GateBookSnapshot') return;
        shelve(shelf, e);
        if (!e.chunk) return void written.push(e);
        const id = `${e.chunk.snapshot_id}/${e.chunk.count}`;
        const set = chunks.get(id) ?? chunks.set(id, []).get(id)!;
        if (!set.some((c) => c.chunk!.index === e.chunk!.index)) set.push(e);
        if (set.length === e.chunk.count) written.push(joinChunks(set));
      },
    });
    return { decisions, snapshots: shelf.latest, written };
  } finally {
    await log.close();
  }
};

/**
 * What a prefix holds, but the closed runs of the keys a snapshot left out (`closed_evicted`: the gates evicted them
 * with their versions, and reload them from the log when a comparison names them).
 */
const content = (s: DecisionsPrefix, evicted: ReadonlySet<string> = s.closedEvicted) => ({
  book: s.book,
  closed: [...s.closed.values()]
    .filter((r) => !evicted.has(candidateKey(r.suite, r.agent_version)))
    .map((r) => r.event_id)
    .sort(),
  through: s.through,
});

describe('gate book snapshots under kill -9', () => {
  it(`restore the books a full replay gives, and every verdict is decided once, as --from-store (seed ${SEED}, horizon ${HORIZON_DAYS} days)`, async () => {
    const rng = createRng(SEED);
    writeFileSync(join(dir, 'trials.jsonl'), trials());
    const imported = await cli('import', join(dir, 'trials.jsonl'));
    expect(imported.code, imported.stderr).toBe(0);
    const pairs = VERSIONS.slice(1).map((candidate, i) => [VERSIONS[i]!, candidate] as const);
    for (const [baseline, candidate] of pairs) {
      const declared = await cli('gate', '--declare', '--baseline', baseline, '--candidate', candidate);
      expect(declared.code, declared.stderr).toBe(0);
      // the processors crash at a random moment: while starting, restoring, deciding or snapshotting
      await crash(rng.int(2_500), rng.next() < 0.6);
    }
    await crash(rng.int(4_000), true);
    const processed = await cli('process', '--until-caught-up');
    expect(processed.code, processed.stderr).toBe(0);

    const { decisions, snapshots, written } = await readLog();
    // every comparison decided, once: a restart after a crash never decided it again
    const verdicts = new Map<string, Set<string>>();
    const byGate = new Map<string, GateEvaluated>();
    for (const records of decisions.values())
      for (const { event } of records)
        if (event.type === 'GateEvaluated') {
          (verdicts.get(event.gate_id) ?? verdicts.set(event.gate_id, new Set()).get(event.gate_id)!).add(
            event.event_id,
          );
          byGate.set(event.gate_id, event);
        }
    expect(verdicts.size, `seed ${SEED}`).toBe(pairs.length);
    for (const [gate, ids] of verdicts) expect(ids.size, `${gate}, seed ${SEED}`).toBe(1);
    for (const [baseline, candidate] of pairs) {
      const live = [...byGate.values()].find((g) => g.baseline === baseline && g.candidate === candidate)!;
      expect(live, `${baseline} → ${candidate}`).toBeDefined();
      expect(live.repeated_verdict).toBeUndefined();
      const offline = await cli('gate', '--from-store', '--baseline', baseline, '--candidate', candidate, '--json');
      expect(offline.code, offline.stderr).toBe(0);
      const store = JSON.parse(offline.stdout) as { verdict: string; rules: { rule: string; passed: boolean }[] };
      expect(live.verdict, `${baseline} → ${candidate}, seed ${SEED}`).toBe(store.verdict);
      expect(live.reasons.map((r) => [r.rule, r.passed])).toEqual(store.rules.map((r) => [r.rule, r.passed]));
    }

    // snapshots were written, and each partition's latest one, with the records after it, is its full replay
    expect(written.length, `seed ${SEED}`).toBeGreaterThan(0);
    const full = new Map<number, DecisionsPrefix>();
    for (const [p, records] of decisions) {
      const replay = emptyPrefix(HORIZON, FORGET);
      foldPrefix(replay, records, records.at(-1)!.offset);
      full.set(p, replay);
      // the clean stop snapshotted what it had folded: the partition to its end
      const latest = snapshots.get(p);
      expect(latest, `partition ${p} holds ${records.length} records and no snapshot`).toBeDefined();
      expect(latest!.through_offset, `partition ${p}, seed ${SEED}`).toBe(records.at(-1)!.offset + 1);
    }
    // every snapshot ever written (some just before a kill) is a prefix of its partition: with the rest, its replay
    for (const snapshot of written) {
      expect(snapshot.horizon_ms).toBe(HORIZON);
      expect(snapshot.forgot_decided).toBe(FORGET || undefined);
      const records = decisions.get(snapshot.partition)!;
      const restored = restorePrefix(snapshot, HORIZON, FORGET);
      const tail = records.filter((r) => r.offset >= snapshot.through_offset);
      if (tail.length > 0) foldPrefix(restored, tail, tail.at(-1)!.offset);
      expect(content(restored), `partition ${snapshot.partition} at ${snapshot.through_offset}, seed ${SEED}`).toEqual(
        content(full.get(snapshot.partition)!, restored.closedEvicted),
      );
    }
  }, 600_000);
});
