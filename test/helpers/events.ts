import { deterministicEventId } from '../../schemas/ids.ts';
import type { EventOf, EventType, PasskEvent } from '../../schemas/events/index.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';

/** Event factories for tests: valid by construction, deterministic for the same arguments. */

const T0 = Date.UTC(2025, 0, 1);
const envelopeOf = <T extends EventType>(type: T, seq: number, producer = 'passk-test/0') => ({
  event_id: deterministicEventId(T0 + seq, type, seq),
  type,
  schema_version: 1,
  occurred_at: T0 + seq,
  producer,
});

export const trial = (over: Partial<TrialRecorded> & { seq?: number } = {}): TrialRecorded => {
  const { seq = 0, ...rest } = over;
  return {
    ...envelopeOf('TrialRecorded', seq),
    suite: 'refunds',
    dataset_version: 'v1',
    row_id: `row-${seq % 100}`,
    run_id: 'run-1',
    attempt: seq,
    agent: { version: 'agent-1.0.0', model: 'model-x' },
    output: `answer ${seq}`,
    expected: 'answer',
    passed: seq % 3 !== 0,
    checks: [{ name: 'return_window', answer: seq % 2 === 0, passed: true }],
    latency_ms: 100 + (seq % 50),
    ...rest,
  };
};

/** `n` trials over `rows` rows (the key is suite + row), attempt numbers increasing per row. */
export const trials = (n: number, opts: { rows?: number; suite?: string; runId?: string } = {}): TrialRecorded[] => {
  const rows = opts.rows ?? 100;
  return Array.from({ length: n }, (_, i) =>
    trial({
      seq: i,
      row_id: `row-${i % rows}`,
      attempt: Math.floor(i / rows),
      suite: opts.suite ?? 'refunds',
      run_id: opts.runId ?? 'run-1',
    }),
  );
};

/** One valid event of every type. */
export const oneOfEach = (): { [T in EventType]: EventOf<T> } => ({
  TrialRecorded: trial({ seq: 1 }),
  TraceSampled: {
    ...envelopeOf('TraceSampled', 2),
    trace_id: 'tr-1',
    agent_version: 'agent-1.0.0',
    segment: 'eu',
    input_fingerprint: 'fp-1',
    sampling: { policy: 'uniform', probability: 0.1 },
    verdicts: [{ grader: 'judge', passed: false, score: 0.2 }],
  },
  JudgmentRecorded: {
    ...envelopeOf('JudgmentRecorded', 3),
    item_id: 'item-1',
    judge: { id: 'judge-1', version: '1' },
    rubric_version: 'r1',
    kind: 'pairwise',
    order: ['a', 'b'],
    label: 'a',
  },
  LabelRecorded: { ...envelopeOf('LabelRecorded', 4), item_id: 'item-1', labeler: 'ann', label: 'a' },
  DatasetRowUpserted: {
    ...envelopeOf('DatasetRowUpserted', 5),
    dataset_id: 'refunds',
    dataset_version: 'v2',
    row_id: 'row-1',
    input: 'refund?',
    expected: 'yes',
    tags: ['must_not_break'],
    provenance: { kind: 'production_failure', trace_id: 'tr-1' },
  },
  FailureConfirmed: {
    ...envelopeOf('FailureConfirmed', 6),
    trace_id: 'tr-1',
    dataset_id: 'refunds',
    input: 'refund?',
    expected: 'yes',
    reviewer: 'ann',
  },
  GateEvaluated: {
    ...envelopeOf('GateEvaluated', 7),
    gate_id: 'gate-1',
    suite: 'refunds',
    dataset_version: 'v2',
    baseline: 'agent-1.0.0',
    candidate: 'agent-1.1.0',
    verdict: 'fail',
    reasons: [{ rule: 'must_not_break', passed: false, detail: 'row-1 regressed', rows: ['row-1'] }],
    evidence: [{ row_id: 'row-1', baseline_attempts: ['a'], candidate_attempts: ['b'] }],
  },
  RowStateChanged: {
    ...envelopeOf('RowStateChanged', 8),
    suite: 'refunds',
    dataset_version: 'v2',
    agent_version: 'agent-1.1.0',
    row_id: 'row-1',
    seq: 1,
    n: 1,
    c: 1,
    ungraded: 0,
    class: 'unclassified',
    attempt_records: [
      {
        event_id: 'x',
        run_id: 'run-1',
        attempt: 0,
        occurred_at: 1_750_000_000_000,
        passed: true,
        output_hash: 'h1',
        checks: [
          { name: 'window', answer: 30 },
          { name: 'window', answer: 14 },
        ],
        forbidden_actions: ['refund_without_receipt'],
      },
    ],
    tags: ['must_not_break'],
  },
  RunFinished: {
    ...envelopeOf('RunFinished', 9),
    run_id: 'run-1',
    suite: 'refunds',
    dataset_version: 'v2',
    agent: { version: 'agent-1.1.0' },
    status: 'completed',
    trials: 3,
    rows: 1,
    k: 3,
  },
  ComparisonDeclared: {
    ...envelopeOf('ComparisonDeclared', 10),
    comparison_id: 'cmp-1',
    suite: 'refunds',
    dataset_version: 'v2',
    baseline: 'agent-1.0.0',
    candidate: 'agent-1.1.0',
    must_not_break: ['row-1'],
    required_attempts: 3,
  },
  ConfirmationRequested: {
    ...envelopeOf('ConfirmationRequested', 11),
    comparison_id: 'cmp-1',
    suite: 'refunds',
    dataset_version: 'v2',
    baseline: 'agent-1.0.0',
    candidate: 'agent-1.1.0',
    rows: ['row-1'],
    attempts: 3,
    run_id: 'confirm-cmp-1',
    reason: 'stable-correct on the baseline, not on the candidate',
  },
  RunClosed: {
    ...envelopeOf('RunClosed', 12),
    run_id: 'run-1',
    suite: 'refunds',
    dataset_version: 'v2',
    agent_version: 'agent-1.1.0',
    status: 'completed',
    trials: 3,
    source_event_id: deterministicEventId(T0 + 9, 'RunFinished', 9),
  },
  RunRetracted: {
    ...envelopeOf('RunRetracted', 16),
    retraction_id: 'retract-1',
    run_id: 'run-1',
    suite: 'refunds',
    dataset_version: 'v2',
    agent_version: 'agent-1.1.0',
    row_id: 'row-1',
    reason: 'the agent command had a typo: every trial failed to start',
    retracted_by: 'ana',
    trials: 3,
  },
  WindowAlertRaised: {
    ...envelopeOf('WindowAlertRaised', 13),
    alert_id: 'alert-1',
    agent_version: 'agent-1.1.0',
    segment: 'eu',
    grader: 'judge',
    window: { size_ms: 3_600_000, start: T0, end: T0 + 3_600_000 },
    pass_rate: 0.5,
    interval: [0.3, 0.7],
    sampled: 20,
    weight: 200,
    offline_pass_at_1: 0.9,
    p_value: 0.001,
    message: 'production pass rate 50% is below offline pass@1 90%',
  },
  TraceWindowsUpdated: {
    ...envelopeOf('TraceWindowsUpdated', 14),
    source_partition: 0,
    source_partitions: 4,
    through_offset: 10,
    watermark: T0,
    horizon: T0 - 86_400_000,
    shares: [
      {
        agent_version: 'agent-1.1.0',
        segment: 'eu',
        grader: 'judge',
        size_ms: 3_600_000,
        start: T0,
        seq: 1,
        closed: false,
        graded: 2,
        ungraded: 0,
        w: 20,
        wy: 10,
        w2: 200,
        w2y: 100,
        repeated: 0,
        flipping: 0,
        late: 0,
      },
    ],
  },
  AdaptiveRoundDecided: {
    ...envelopeOf('AdaptiveRoundDecided', 15),
    run_id: 'adaptive-1',
    suite: 'refunds',
    dataset_version: 'v2',
    agent_version: 'agent-1.1.0',
    round: 1,
    spent: 4,
    budget: 10,
    first_k: 2,
    max_k: 8,
    min_attempts: 3,
    grants: [{ row_id: 'row-1', attempts: 1 }],
    decisions: [
      { row_id: 'row-1', decision: 'continue', reason: 'must_not_break_uncertain', n: 2, c: 2, attempts: 2 },
      { row_id: 'row-2', decision: 'stop', reason: 'flip_seen', n: 2, c: 1, attempts: 2, class: 'flip' },
    ],
    done: false,
  },
});

export const allEventSamples = (): PasskEvent[] => Object.values(oneOfEach());
