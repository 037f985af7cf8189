import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS } from '../../schemas/topics.ts';
import type { EventLog } from '../../processors/ports.ts';
import { fromRowStateChanged } from '../../processors/folds/rowState.ts';
import { checkpointOf, foldTrials, restoreTable, type RowTable } from '../../processors/folds/rowTable.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { ChildOptions } from './processorsChild.ts';
import { comparison, datasetRow, runOf } from './feedbackLoop.ts';
import { trial } from './processorFixtures.ts';

/** One backend for the processors' integration scenarios: a fresh, empty log per call. */
export interface ProcessorsBackend {
  readonly name: string;
  fresh(): { child: Omit<ChildOptions, 'instanceId'>; open: () => Promise<EventLog>; dispose: () => void };
}

export const embeddedBackend: ProcessorsBackend = {
  name: 'embedded log',
  fresh: () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-proc-'));
    const child = { backend: 'embedded' as const, dataDir };
    return {
      child,
      open: () => openEventLog(PasskConfig.parse(child)),
      dispose: () => rmSync(dataDir, { recursive: true, force: true }),
    };
  },
};

export const kafkaBackend = (brokers: string, registry: string): ProcessorsBackend => ({
  name: 'Kafka',
  fresh: () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-proc-k-'));
    const namespace = `t${randomBytes(4).toString('hex')}.`;
    const child = { backend: 'kafka' as const, dataDir, brokers, registry, namespace };
    const config = PasskConfig.parse({
      backend: 'kafka',
      dataDir,
      kafka: { brokers: brokers.split(','), schemaRegistryUrl: registry, partitions: 4 },
    });
    return {
      child,
      open: () => openEventLog(config, { namespace }),
      dispose: () => rmSync(dataDir, { recursive: true, force: true }),
    };
  },
});

export interface Child {
  readonly proc: ChildProcess;
  readonly lines: Record<string, unknown>[];
  /** Records of units whose commit succeeded. */
  committed(): number;
  /** Trial partitions it owns now, from its assignment reports. */
  owned(): Set<number>;
  started: Promise<void>;
  exited: Promise<number | null>;
}

const script = join(import.meta.dirname, 'processorsChild.ts');

export const startChild = (o: ChildOptions): Child => {
  const proc = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(o)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  let buffer = '';
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  proc.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, i)) as Record<string, unknown>;
      buffer = buffer.slice(i + 1);
      lines.push(line);
      if (line.type === 'started') markStarted();
    }
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    proc,
    lines,
    started,
    exited,
    owned: () => {
      const owned = new Set<number>();
      for (const l of lines)
        if (l.type === 'assignment') {
          for (const p of l.assigned as number[]) owned.add(p);
          for (const p of l.revoked as number[]) owned.delete(p);
        }
      return owned;
    },
    committed: () =>
      lines.filter((l) => l.type === 'progress' && l.committed).reduce((a, l) => a + (l.records as number), 0),
  };
};

/** Polls `ready` (a child's reported progress, not a sleep-and-hope) until it holds or `ms` pass. */
export const until = async (ready: () => boolean, ms: number, what: string): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/**
 * A workload with everything the fold must not care about: attempts newest first, every fifth
 * trial delivered twice, and a second event for a taken (run, attempt) slot.
 */
export const workload = (rows: number): TrialRecorded[] => {
  const out: TrialRecorded[] = [];
  for (let a = 2; a >= 0; a--)
    for (let r = 0; r < rows; r++)
      for (const v of ['v1', 'v2'])
        out.push(
          trial({
            row: `r${r}`,
            version: v,
            attempt: a,
            passed: (r * 7 + a + (v === 'v2' ? 1 : 0)) % 4 !== 0,
            output: `o${(r + a) % 3}`,
          }),
        );
  const dupes = out.filter((_, i) => i % 5 === 0);
  const rivals = out.slice(0, 20).map((t) => ({
    ...t,
    event_id: t.event_id.slice(0, 25) + (t.event_id.endsWith('Z') ? 'Y' : 'Z'),
    passed: !t.passed,
  }));
  return [...out, ...dupes, ...rivals];
};

/**
 * Gate inputs: clean runs (every slot filled once, so "complete" is final) of a baseline and a
 * candidate that breaks two must-not-break rows, and two comparisons: one decided at once, one
 * that asks for confirmation runs first.
 */
export const gateWorkload = (rows: number): PasskEvent[] => {
  const ids = Array.from({ length: rows }, (_, r) => `g${r}`);
  return [
    ...ids.map((id) => ({ ...datasetRow('dg', id), dataset_id: 'gate-ds' })),
    ...runOf('gate-base', 'dg', ids),
    ...runOf('gate-cand', 'dg', ids, { fails: ['g3', 'g7'] }),
    comparison('cmp-now', 'dg', 'gate-base', 'gate-cand', {
      dataset_id: 'gate-ds',
      must_not_break: ['g3', 'g7', 'g9'],
      confirmation_attempts: 0,
    }),
    comparison('cmp-confirm', 'dg', 'gate-base', 'gate-cand', { dataset_id: undefined, rows, must_not_break: ['g3'] }),
  ];
};

/** The decisions the gates made (verdicts and confirmation requests), as comparable text. */
export const decisionsOf = async (log: EventLog): Promise<string[]> => {
  const out = new Set<string>();
  await readToEnd(log, {
    topic: TOPICS.decisions,
    groupId: `decisions-${randomBytes(4).toString('hex')}`,
    onEvent: (e) => {
      if (e.type === 'GateEvaluated')
        out.add(JSON.stringify([e.event_id, e.gate_id, e.verdict, e.repeated_verdict ?? false, e.reasons, e.evidence]));
      if (e.type === 'ConfirmationRequested') out.add(JSON.stringify([e.event_id, e.comparison_id, e.rows]));
    },
  });
  return [...out].sort();
};

export const publishAll = async (log: EventLog, events: readonly PasskEvent[]) => {
  for (let i = 0; i < events.length; i += 500) await log.publisher.publish(events.slice(i, i + 500));
};

/** The row states the changelog holds (highest seq per key), as checkpoint bytes. */
export const changelogState = async (log: EventLog): Promise<string> => {
  const rows: RowStateChanged[] = [];
  await readToEnd(log, {
    topic: TOPICS.rowstate,
    groupId: `check-${randomBytes(4).toString('hex')}`,
    onEvent: (e) => void (e.type === 'RowStateChanged' && rows.push(e)),
  });
  return JSON.stringify(checkpointOf(restoreTable(rows.map(fromRowStateChanged))));
};

/** One straight replay of the trials topic, partition by partition in offset order (per-key order is the log's). */
export const straightReplay = async (log: EventLog): Promise<string> => {
  const byPartition = new Map<number, TrialRecorded[]>();
  await readToEnd(log, {
    topic: TOPICS.trials,
    groupId: `replay-${randomBytes(4).toString('hex')}`,
    onEvent: (e, p) => {
      if (e.type !== 'TrialRecorded') return;
      const list = byPartition.get(p) ?? [];
      list.push(e);
      byPartition.set(p, list);
    },
  });
  const table: RowTable = new Map();
  for (const p of [...byPartition.keys()].sort()) foldTrials(table, byPartition.get(p)!);
  return JSON.stringify(checkpointOf(table));
};
