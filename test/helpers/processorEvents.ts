import type { EventOf } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';

/**
 * One valid event of each type the processors added (for `oneOfEach` in events.ts:
 * `...processorEventExamples()`).
 */
const T = Date.UTC(2025, 0, 1);
const env = <T extends string>(type: T, seq: number) => ({
  event_id: deterministicEventId(T + seq, type, seq),
  type,
  schema_version: 1,
  occurred_at: T + seq,
  producer: 'passk-test/0',
});

export const processorEventExamples = (): {
  ComparisonDeclared: EventOf<'ComparisonDeclared'>;
  ConfirmationRequested: EventOf<'ConfirmationRequested'>;
  RunClosed: EventOf<'RunClosed'>;
  WindowAlertRaised: EventOf<'WindowAlertRaised'>;
  TraceWindowsUpdated: EventOf<'TraceWindowsUpdated'>;
} => ({
  ComparisonDeclared: {
    ...env('ComparisonDeclared', 20),
    comparison_id: 'cmp-1',
    suite: 'refunds',
    dataset_id: 'ds-1',
    dataset_version: 'v1',
    baseline: 'agent-1.0.0',
    candidate: 'agent-1.1.0',
    must_not_break: ['row-1'],
    required_attempts: 3,
    confirmation_attempts: 3,
    rules: { zero_forbidden_actions: true },
  },
  ConfirmationRequested: {
    ...env('ConfirmationRequested', 21),
    comparison_id: 'cmp-1',
    suite: 'refunds',
    dataset_version: 'v1',
    baseline: 'agent-1.0.0',
    candidate: 'agent-1.1.0',
    rows: ['row-1'],
    attempts: 3,
    run_id: 'confirm-cmp-1',
    reason: '1 row(s) stable-correct on agent-1.0.0 are not on agent-1.1.0',
  },
  RunClosed: {
    ...env('RunClosed', 22),
    run_id: 'run-1',
    suite: 'refunds',
    dataset_version: 'v1',
    agent_version: 'agent-1.1.0',
    status: 'completed',
    trials: 300,
    source_event_id: deterministicEventId(T, 'RunFinished', 1),
  },
  WindowAlertRaised: {
    ...env('WindowAlertRaised', 23),
    alert_id: deterministicEventId(T + 23, 'alert'),
    agent_version: 'agent-1.0.0',
    segment: 'eu',
    grader: 'judge',
    window: { size_ms: 3_600_000, start: T, end: T + 3_600_000 },
    pass_rate: 0.5,
    interval: [0.43, 0.57],
    sampled: 200,
    weight: 2000,
    offline_pass_at_1: 0.9,
    p_value: 1e-9,
    message: 'agent-1.0.0 / eu: production pass rate 50.0% is below offline pass@1 90.0%',
  },
  TraceWindowsUpdated: {
    ...env('TraceWindowsUpdated', 24),
    source_partition: 0,
    source_partitions: 4,
    through_offset: 120,
    watermark: T + 7_000_000,
    horizon: T - 80_000_000,
    shares: [
      {
        agent_version: 'agent-1.0.0', segment: 'eu', grader: 'judge', size_ms: 3_600_000, start: T, seq: 12, closed: true,
        graded: 10, ungraded: 1, w: 100, wy: 50, w2: 1000, w2y: 500, repeated: 2, flipping: 1, late: 0,
      },
    ],
  },
});
