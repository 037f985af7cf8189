import fc from 'fast-check';
import type { DecisionsPrefix } from '../../processors/folds/gateSnapshot.ts';
import { foldPrefix } from '../../processors/folds/gateSnapshot.ts';
import type { DecisionEvent } from '../../processors/folds/gates.ts';
import { PasskEvent, type GateBookSnapshot } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { comparison } from './feedbackLoop.ts';

/**
 * A partition of passk.decisions for the gate book's tests (gateSnapshot, gateHorizon): comparison k's six events,
 * dated `at`, and the helpers that fold them in batches and pass a snapshot through the log's JSON and schema.
 */
/**
 * What the snapshot properties draw besides the stream: the batch sizes the log hands the fold in (before and after
 * the snapshot), and two points in the stream (any number: taken modulo the records' count), where the snapshot is
 * cut and where the consumer last committed.
 */
export const batchesAndPoints = [
  fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
  fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
  fc.nat(1_000),
  fc.nat(1_000),
] as const;

/** A prefix as the snapshot tests compare it: its book, its closed runs in event id order, and its offset. */
export const prefixContent = (s: DecisionsPrefix) => ({
  book: s.book,
  closed: [...s.closed.values()].sort((a, b) => a.event_id.localeCompare(b.event_id)),
  through: s.through,
});

/** The events of comparison k at event time `at` (candidate `cand{k%3}`), in the order a partition sees them. */
export const decisionEvents = (k: number, at: number, alerts = 4): DecisionEvent[] => {
  const id = `c${k}`;
  const scope = { suite: 'refunds', dataset_version: 'd1', baseline: 'base', candidate: `cand${k % 3}` };
  const env = (type: string, ...parts: (string | number)[]) => ({
    event_id: deterministicEventId(at, type, ...parts),
    schema_version: 1,
    occurred_at: at,
    producer: 'p',
  });
  return [
    comparison(id, 'd1', 'base', scope.candidate, { occurred_at: at, event_id: env('c', id, at).event_id }),
    {
      ...env('AdaptiveRoundDecided', id),
      type: 'AdaptiveRoundDecided',
      run_id: `adaptive-${k}`,
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: scope.candidate,
      round: 0,
      spent: 0,
      budget: null,
      first_k: 2,
      max_k: 2 + (k % 4),
      min_attempts: 2,
      grants: [],
      decisions: [],
      done: false,
    },
    {
      ...env('ConfirmationRequested', id),
      type: 'ConfirmationRequested',
      comparison_id: id,
      ...scope,
      rows: ['r1'],
      attempts: 3,
      run_id: `confirm-${id}`,
      reason: 'x',
    },
    {
      ...env('GateEvaluated', id),
      type: 'GateEvaluated',
      schema_version: 2,
      gate_id: id,
      ...scope,
      verdict: k % 2 === 0 ? 'pass' : 'fail',
      reasons: [],
      evidence: [],
      must_not_break: [],
    },
    {
      ...env('RunClosed', id),
      type: 'RunClosed',
      run_id: `run-${k}`,
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: scope.candidate,
      status: 'completed',
      trials: 3,
      source_event_id: deterministicEventId(at, 'RunFinished', k),
    },
    {
      ...env('WindowAlertRaised', k % alerts),
      type: 'WindowAlertRaised',
      alert_id: `alert-${k % alerts}`,
      agent_version: 'v',
      segment: 's',
      grader: 'g',
      window: '1h',
      window_start: at,
      window_end: at + 3_600_000,
      production_pass_rate: 0.5,
      offline_pass_at_1: 0.9,
      delta: -0.4,
      threshold: 0.1,
      n: 100,
    } as unknown as DecisionEvent,
  ];
};

export type Rec = { offset: number; event: DecisionEvent };

/** Folds records in batches of the given sizes (cycled), each batch's last offset moving the prefix on. */
export const foldBatched = (s: DecisionsPrefix, records: readonly Rec[], sizes: readonly number[]): DecisionsPrefix => {
  for (let i = 0, b = 0; i < records.length; b++) {
    const batch = records.slice(i, i + sizes[b % sizes.length]!);
    foldPrefix(s, batch, batch.at(-1)!.offset);
    i += batch.length;
  }
  return s;
};

/** The snapshot as the log hands it back: JSON bytes, parsed and validated by the event schema. */
export const throughTheLog = (x: GateBookSnapshot): GateBookSnapshot => {
  const parsed = PasskEvent.parse(JSON.parse(JSON.stringify(x)));
  if (parsed.type !== 'GateBookSnapshot') throw new Error(parsed.type);
  return parsed;
};
