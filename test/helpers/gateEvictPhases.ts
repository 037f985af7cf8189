import { lastValueFrom } from 'rxjs';
import { expect } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import { toRunClosed } from '../../processors/folds/gates.ts';
import { toRowStateChanged, type StreamRowState } from '../../processors/folds/rowState.ts';
import { foldTrials } from '../../processors/folds/rowTable.ts';
import { gateTopology, type EventSink } from '../../processors/index.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { EventLog, EventSource } from '../../processors/ports.ts';
import type { ComparisonDeclared } from '../../schemas/events/comparisons.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { T0, trial } from './processorFixtures.ts';

/**
 * Issue 26, item 6, through the gates topology on a real log: with eviction on, a comparison decided evicts its
 * versions' row tables; a later comparison naming one of them waits for its reload from passk.rowstate (a
 * key-filtered read of the topic) and decides what the gates that never evict decide, also across a restart.
 * Phase 1 decides gate-1 (a → b); phase 2 declares gate-2 (b → c): b was evicted by gate-1's verdict; phase 3,
 * after a restart, gate-3 (c → a).
 */
const SUITE = 'refunds';
const DV = 'd1';
const table = new Map<string, StreamRowState>();
const rowsOf = (version: string, passes: readonly boolean[], at: number): PasskEvent[] =>
  foldTrials(
    table,
    passes.map((passed, i) =>
      trial({
        suite: SUITE,
        dataset_version: DV,
        row: `r${i % 3}`,
        version,
        run: `run-${version}`,
        attempt: i,
        passed,
        output: 'x',
        at: at + i,
      }),
    ),
  ).map((ch) => toRowStateChanged(ch.after, 'p'));
const closed = (version: string, trials: number, at: number) => {
  const f: RunFinished = {
    event_id: deterministicEventId(at, 'RunFinished', version),
    type: 'RunFinished',
    schema_version: 1,
    occurred_at: at,
    producer: 'test',
    run_id: `run-${version}`,
    suite: SUITE,
    dataset_version: DV,
    agent: { version },
    status: 'completed',
    trials,
  };
  return toRunClosed(f, 'p');
};
const declared = (id: string, baseline: string, candidate: string, at: number): ComparisonDeclared => ({
  event_id: deterministicEventId(at, 'ComparisonDeclared', id),
  type: 'ComparisonDeclared',
  schema_version: 1,
  occurred_at: at,
  producer: 'test',
  comparison_id: id,
  suite: SUITE,
  dataset_version: DV,
  baseline,
  candidate,
  confirmation_attempts: 0,
});

const PASS = [true, true, true, true, true, true, true, true, true];
const MIXED = [true, false, true, true, true, false, true, true, true];
const rowsA = rowsOf('a', PASS, T0 + 1_000);
const rowsB = rowsOf('b', MIXED, T0 + 2_000);
// two days later: past the evicting gates' one-day idle window, a's and b's closed runs go too (with their rows)
const LATER = T0 + 2 * 86_400_000;
const rowsC = rowsOf('c', PASS, LATER + 3_000);
export const phases: PasskEvent[][] = [
  [
    ...rowsA,
    ...rowsB,
    closed('a', 9, T0 + 4_000),
    closed('b', 9, T0 + 4_001),
    declared('gate-1', 'a', 'b', T0 + 5_000),
  ],
  // names b, evicted once gate-1 decided: reloaded before gate-2 decides
  [...rowsC, closed('c', 9, LATER + 6_000), declared('gate-2', 'b', 'c', LATER + 7_000)],
  // after a restart: names a, evicted then, rows and closed runs (the snapshot left a's runs out): both reloaded
  [declared('gate-3', 'c', 'a', LATER + 8_000)],
];

/** A fresh log for the phases, and how to open it again for the restart (else the same handle goes on). */
type PhasedLog = { log: EventLog; reopen?: () => EventLog | Promise<EventLog> };

/**
 * Runs the gates topology over the three phases on a fresh log (`reopen`: a new handle on the same log for the
 * restart, else the same one): what was decided by the end of each phase, and how many reloads' readers were opened.
 * `restart.evictIdleMs`: the eviction of the restarted gates (by default `evictIdleMs`; undefined: turned off).
 */
const runPhases = async (
  b: PhasedLog,
  evictIdleMs: number | undefined,
  idleTries = 3_000,
  restart: { readonly evictIdleMs: number | undefined } = { evictIdleMs },
) => {
  let log = b.log;
  const groups: string[] = [];
  const counted = (l: EventLog): EventSource => ({
    consumer: (o) => {
      groups.push(o.groupId);
      return l.consumer(o);
    },
  });
  const sink: EventSink = { writeEvents: async () => {}, writeWindows: async () => {} };
  const start = (evictIdleMs: number | undefined) => {
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    let probe: (() => Promise<boolean>) | undefined;
    const source = counted(log);
    const done = lastValueFrom(
      gateTopology(
        { source, publisher: log.publisher, sink },
        {
          instanceId: 'evict',
          producer: 'passk-processors/test',
          partitionOf,
          stop: stopped,
          onIdleProbe: (p) => (probe = p),
          ...(evictIdleMs === undefined ? {} : { evictIdleMs }),
        },
      ),
      { defaultValue: undefined },
    );
    const idle = async () => {
      for (let i = 0; i < idleTries && !(probe && (await probe())); i++) await new Promise((r) => setTimeout(r, 5));
      expect(probe && (await probe())).toBe(true);
    };
    return { idle, stop: async () => (stop(), await done) };
  };
  let gates = start(evictIdleMs);
  const phased: string[][] = [];
  for (const [i, events] of phases.entries()) {
    if (i === 2) {
      // a restart between the phases
      await gates.stop();
      if (b.reopen) {
        await log.close();
        log = await b.reopen();
      }
      gates = start(restart.evictIdleMs);
    }
    await log.publisher.publish(events);
    await gates.idle();
    // what was decided by the end of each phase (a restart must not be what decides it)
    const verdicts: string[] = [];
    await readToEnd(log, {
      topic: TOPICS.decisions,
      groupId: `check-${i}-${Math.random().toString(36).slice(2, 8)}`,
      onEvent: (e) => void (e.type === 'GateEvaluated' && verdicts.push(`${e.gate_id} ${e.verdict} ${e.event_id}`)),
    });
    phased.push(verdicts.sort());
  }
  await gates.stop();
  await log.close();
  return {
    phased,
    reloads: groups.filter((g) => g.includes('.reload.')).length,
    // the restores that read passk.rowstate for its snapshots alone, every row state skipped by key (`restoreKeys`)
    restores: groups.filter((g) => g.includes(`.${TOPICS.rowstate}.restore.`)).length,
  };
};

/**
 * The phases run twice on fresh logs, by gates that never evict and by gates that evict what a verdict named (1-day
 * idle window): the evicting gates reload at least once and decide, phase by phase, what the others decide.
 */
export const expectEvictingDecidesAsNeverEvicting = async (
  fresh: () => PhasedLog | Promise<PhasedLog>,
  idleTries?: number,
) => {
  const full = await runPhases(await fresh(), undefined, idleTries);
  const evicting = await runPhases(await fresh(), 86_400_000, idleTries);
  expect(full.reloads).toBe(0);
  expect(evicting.reloads).toBeGreaterThanOrEqual(1);
  // evicting, both starts (the first, and the restart) restored the row table by key; never evicting, neither
  expect(full.restores).toBe(0);
  expect(evicting.restores).toBe(2);
  expect(full.phased.map((vs) => vs.map((v) => v.split(' ')[0]))).toEqual([
    ['gate-1'],
    ['gate-1', 'gate-2'],
    ['gate-1', 'gate-2', 'gate-3'],
  ]);
  expect(evicting.phased).toEqual(full.phased);
};

/**
 * The phases by gates that evict (1-day idle window) until the restart, then restarted with eviction off
 * (`PASSK_GATE_EVICT_IDLE_DAYS=0`): the snapshot the first gates wrote at their stop names a's closed runs evicted
 * (closed_evicted), so gate-3 (naming a) is decided only once the restarted gates reload them; they decide what the
 * gates that never evict decide.
 */
export const expectEvictionTurnedOffDecides = async (
  fresh: () => PhasedLog | Promise<PhasedLog>,
  idleTries?: number,
) => {
  const full = await runPhases(await fresh(), undefined, idleTries);
  const turnedOff = await runPhases(await fresh(), 86_400_000, idleTries, { evictIdleMs: undefined });
  // the first start restored by key, the restart (eviction off) read the row table whole
  expect(turnedOff.restores).toBe(1);
  expect(turnedOff.phased).toEqual(full.phased);
};
