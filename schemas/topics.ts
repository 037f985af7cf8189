import type { EventType, PasskEvent } from './events/index.ts';

/** Topic names; `passk.rowstate` is compacted, the others are append-only. */
export const TOPICS = {
  trials: 'passk.trials',
  traces: 'passk.traces',
  judgments: 'passk.judgments',
  datasets: 'passk.datasets',
  decisions: 'passk.decisions',
  rowstate: 'passk.rowstate',
  dlq: 'passk.dlq',
} as const;
export type Topic = (typeof TOPICS)[keyof typeof TOPICS];
export const ALL_TOPICS = Object.values(TOPICS) as Topic[];

export const TOPIC_OF: Record<EventType, Topic> = {
  TrialRecorded: TOPICS.trials,
  TraceSampled: TOPICS.traces,
  JudgmentRecorded: TOPICS.judgments,
  LabelRecorded: TOPICS.judgments,
  DatasetRowUpserted: TOPICS.datasets,
  FailureConfirmed: TOPICS.datasets,
  GateEvaluated: TOPICS.decisions,
  RowStateChanged: TOPICS.rowstate,
  RunFinished: TOPICS.trials,
  ComparisonDeclared: TOPICS.decisions,
  ConfirmationRequested: TOPICS.decisions,
  RunClosed: TOPICS.decisions,
  WindowAlertRaised: TOPICS.decisions,
  TraceWindowsUpdated: TOPICS.rowstate,
};

const SEP = '\u001f'; // unit separator: cannot collide with ids made of printable text

/** The partition key of an event (DESIGN.md): it fixes per-key ordering. */
export const keyOf = (e: PasskEvent): string => {
  switch (e.type) {
    case 'TrialRecorded':
      return e.suite + SEP + e.row_id;
    case 'TraceSampled':
      return e.input_fingerprint;
    case 'JudgmentRecorded':
    case 'LabelRecorded':
      return e.item_id;
    case 'DatasetRowUpserted':
      return e.dataset_id;
    case 'FailureConfirmed':
      return e.dataset_id;
    case 'GateEvaluated':
      return e.suite + SEP + e.candidate;
    case 'RowStateChanged':
      return [e.suite, e.dataset_version, e.agent_version, e.row_id].join(SEP);
    case 'RunFinished':
      return e.suite + SEP + e.run_id;
    // a candidate's comparisons, confirmations and closed runs share its gates' partition
    case 'ComparisonDeclared':
    case 'ConfirmationRequested':
      return e.suite + SEP + e.candidate;
    case 'RunClosed':
      return e.suite + SEP + e.agent_version;
    case 'WindowAlertRaised':
      return e.agent_version + SEP + e.segment;
    // one compacted record per source partition of passk.traces
    case 'TraceWindowsUpdated':
      return 'windows' + SEP + e.source_partition;
  }
};

export const topicOf = (e: PasskEvent): Topic => TOPIC_OF[e.type];
