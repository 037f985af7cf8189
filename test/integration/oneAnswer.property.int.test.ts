import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { needsRebuild, storeDrift } from '../../deploy/rebuild.ts';
import { openStore } from '../../deploy/store.ts';
import { groupTrials } from '../../processors/core/groups.ts';
import { buildReport } from '../../processors/core/report.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { checkConsistency } from '../../sinks/clickhouse/consistency.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import { T0, trial } from '../helpers/processorFixtures.ts';
import { ROOT } from '../browser/processes.ts';

/**
 * Issue 26, item 3, end to end on the embedded log and chDB: random interleavings of sends, re-sends of the same
 * event, conflicts (the same attempt with another verdict, under its own event id or another one) and processor
 * restarts, and crashes: a `passk process` (the real CLI, a child process) killed with SIGKILL at a random moment
 * (loading, opening the store, restoring, mid-unit, idle). After each run of the processors, `passk check`'s two checks hold (trials, row states and summaries
 * agree; the store holds what the log committed) and the store's report is the offline report of the accepted
 * trials: the first answer of each attempt in log order. Every conflict record is in the DLQ once, with both event
 * ids, and in the store's dead_letters once.
 */

type Op =
  | { kind: 'send'; slot: number; passed: boolean }
  | { kind: 'resend'; pick: number }
  | { kind: 'conflict'; slot: number; sameId: boolean }
  | { kind: 'process' }
  | { kind: 'crash'; afterMs: number; afterStarted: boolean };

const SLOTS = 12; // 2 versions × 2 rows × 3 attempts
const slotSpec = (slot: number) => ({
  version: slot % 2 === 0 ? 'v1' : 'v2',
  row: `r${Math.floor(slot / 2) % 2}`,
  attempt: Math.floor(slot / 4),
});

const arbOp: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('send' as const), slot: fc.nat(SLOTS - 1), passed: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('resend' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('conflict' as const), slot: fc.nat(SLOTS - 1), sameId: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'process' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('crash' as const),
      afterMs: fc.integer({ min: 0, max: 5_000 }),
      afterStarted: fc.boolean(),
    }),
  },
);

/**
 * `passk process` on the data directory, killed with SIGKILL (nothing cleaned up, nothing committed in flight):
 * `afterMs` after it was spawned (loading, opening the store, restoring, processing), or, `afterStarted`, within
 * 1.5 s of saying it started, while it folds and writes its first units (the batch window is 500 ms).
 */
const crash = async (dataDir: string, op: { afterMs: number; afterStarted: boolean }): Promise<void> => {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'passk.mjs'), '--data-dir', dataDir, 'process'], {
    cwd: ROOT,
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
  if (op.afterStarted) await started;
  await new Promise((resolve) => setTimeout(resolve, op.afterStarted ? op.afterMs % 1_500 : op.afterMs));
  child.kill('SIGKILL');
  await closed;
};

describe('one answer per trial identity, through the log, the processors and the store', () => {
  it('check holds and the store reports the accepted trials, for any sends, re-sends, conflicts, restarts and crashes', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(arbOp, { minLength: 4, maxLength: 24 }), async (ops) => {
        const dataDir = mkdtempSync(join(tmpdir(), 'passk-one-answer-'));
        const config = PasskConfig.parse({ dataDir });
        const log = await openEventLog(config);
        // what the log holds, in publish order (every event of an attempt has one key, so one partition)
        const published: TrialRecorded[] = [];
        const accepted = new Map<number, TrialRecorded>();
        let salt = 0;
        const publish = async (t: TrialRecorded) => {
          await log.publisher.publish([t]);
          published.push(t);
        };
        const processAndCheck = async () => {
          const run = await startProcessors(config, {
            log,
            untilCaughtUp: true,
            maxWaitMs: 1,
            instanceId: `run-${runs++}`,
            only: ['trials'],
          });
          await run.done;
          const store = await openStore(config, { migrate: false });
          try {
            const consistency = await checkConsistency(store.client);
            expect(consistency.ok, JSON.stringify(consistency.differences)).toBe(true);
            const drift = await storeDrift(log, store.client);
            expect(needsRebuild(drift)).toBe(false);
            expect(drift.damaged).toBe(false);
            const stored = await loadTrialsForReport(store.client);
            const want = [...accepted.values()];
            expect(stored.map((t) => t.event_id).sort()).toEqual(want.map((t) => t.event_id).sort());
            if (want.length > 0)
              expect(JSON.stringify(buildReport(groupTrials(stored)))).toBe(
                JSON.stringify(buildReport(groupTrials(want))),
              );
          } finally {
            await store.close();
          }
        };
        try {
          for (const op of ops) {
            if (op.kind === 'process') {
              await processAndCheck();
              continue;
            }
            if (op.kind === 'crash') {
              await crash(dataDir, op);
              continue;
            }
            if (op.kind === 'resend') {
              if (published.length > 0) await publish(published[op.pick % published.length]!);
              continue;
            }
            const s = slotSpec(op.slot);
            const held = accepted.get(op.slot);
            if (op.kind === 'send' && held === undefined) {
              const t = trial({ ...s, passed: op.passed, at: T0 + s.attempt * 1000 });
              accepted.set(op.slot, t);
              await publish(t);
              continue;
            }
            if (held === undefined) continue; // nothing to conflict with yet
            // another answer for a taken attempt: another verdict, under its id or a new one
            const id = op.kind === 'conflict' && op.sameId ? held.event_id : deterministicEventId(T0, 'x', salt++);
            await publish({ ...held, event_id: id, passed: !held.passed });
          }
          await processAndCheck();
          const isConflict = (t: TrialRecorded, i: number) => {
            const first = published.findIndex(
              (p) => p.row_id === t.row_id && p.agent.version === t.agent.version && p.attempt === t.attempt,
            );
            return first < i && (published[first]!.event_id !== t.event_id || published[first]!.passed !== t.passed);
          };
          const conflicts = published.filter(isConflict);
          const letters = await log.deadLetters();
          expect(letters).toHaveLength(conflicts.length);
          expect(new Set(letters.map((l) => `${l.source.partition}/${l.source.offset}`)).size).toBe(letters.length);
          for (const l of letters) {
            const t = JSON.parse(new TextDecoder().decode(l.value)) as TrialRecorded;
            const first = [...accepted.values()].find(
              (a) => a.row_id === t.row_id && a.agent.version === t.agent.version && a.attempt === t.attempt,
            )!;
            expect(l.reason).toContain(`was folded as event ${first.event_id}; this one, event ${t.event_id}`);
          }
          const store = await openStore(config, { migrate: false });
          try {
            const rows = (await (
              await store.client.query({
                query: "SELECT count() AS n FROM dead_letters FINAL WHERE stage = 'conflict'",
                format: 'JSONEachRow',
              })
            ).json()) as { n: string }[];
            expect(Number(rows[0]!.n)).toBe(conflicts.length);
          } finally {
            await store.close();
          }
        } finally {
          await log.close();
          rmSync(dataDir, { recursive: true, force: true });
        }
      }),
      { numRuns: 6, seed: 26, endOnFailure: true },
    );
  }, 300_000);
});
