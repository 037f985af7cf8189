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
  RunRetracted: TOPICS.trials,
  ComparisonDeclared: TOPICS.decisions,
  ConfirmationRequested: TOPICS.decisions,
  RunClosed: TOPICS.decisions,
  WindowAlertRaised: TOPICS.decisions,
  TraceWindowsUpdated: TOPICS.rowstate,
  AdaptiveRoundDecided: TOPICS.decisions,
  GateBookSnapshot: TOPICS.rowstate,
};

/**
 * The separator of every composite key, partition keys and in-memory map keys alike (the unit
 * separator: it cannot collide with ids made of printable text). Its one definition.
 */
export const KEY_SEP = '\u001f';
const SEP = KEY_SEP;

/** A (topic, partition) as one map key. */
export const tpKey = (tp: { readonly topic: string; readonly partition: number }): string =>
  tp.topic + SEP + tp.partition;

// The partition keys `keyOf` gives, for callers that hold a row state or a window total rather
// than the event: they use these, never their own concatenation, so each key has one definition.
/** A TrialRecorded's key: its row on passk.trials. */
export const trialKey = (r: { readonly suite: string; readonly row_id: string }): string => r.suite + SEP + r.row_id;
/**
 * A row's key from its four parts: (suite, dataset version, agent version, row). Joined, not concatenated: a
 * concatenation is a tree of pieces (V8's cons strings), and a row table keeps its keys for the life of the row;
 * the joined key is one flat string, 160 → 60 bytes per key (bench/growth.ts's memory per row of state).
 */
export const rowKey = (suite: string, datasetVersion: string, agentVersion: string, rowId: string): string =>
  [suite, datasetVersion, agentVersion, rowId].join(SEP);
/** A row state's key: `rowKey` of its four parts. */
export const rowStateKey = (r: {
  readonly suite: string;
  readonly dataset_version: string;
  readonly agent_version: string;
  readonly row_id: string;
}): string => rowKey(r.suite, r.dataset_version, r.agent_version, r.row_id);
/** A candidate's key on passk.decisions: its gates, comparisons, confirmations and closed runs. */
export const candidateKey = (suite: string, candidate: string): string => suite + SEP + candidate;
/** A production window's key on passk.decisions: (agent version, segment). */
export const windowAlertKey = (r: { readonly agent_version: string; readonly segment: string }): string =>
  r.agent_version + SEP + r.segment;

/** A gate book snapshot's key on passk.rowstate: one per partition of passk.decisions. */
export const gateBookKey = (partition: number): string => 'gatebook' + SEP + partition;
/**
 * A chunk's key, for a snapshot written in several records: three parts (a whole snapshot's key has two, a row
 * state's four), one per slot (`a`, `b`) and chunk index, so compaction keeps the other slot's complete snapshot.
 */
export const gateBookChunkKey = (partition: number, slot: 'a' | 'b', index: number): string =>
  gateBookKey(partition) + SEP + slot + index;
/** A production windows snapshot's key on passk.rowstate: one per partition of passk.traces. */
export const windowsKey = (partition: number): string => 'windows' + SEP + partition;
/**
 * Whether a passk.rowstate key is a snapshot's (`windowsKey`, `gateBookKey`: two parts; `gateBookChunkKey`: three)
 * and not a row state's (`rowKey`: four parts), read without decoding the record: the windows topology's restore
 * skips the row states.
 */
export const isSnapshotKey = (key: string): boolean => {
  const sep = key.indexOf(SEP);
  if (sep < 0) return false;
  const second = key.indexOf(SEP, sep + 1);
  if (key.startsWith('windows') && sep === 7) return second < 0;
  return key.startsWith('gatebook') && sep === 8 && (second < 0 || !key.includes(SEP, second + 1));
};

/** The partition key of an event (docs/event-log.md, "Guarantees"): it fixes per-key ordering. */
export const keyOf = (e: PasskEvent): string => {
  switch (e.type) {
    case 'TrialRecorded':
      return trialKey(e);
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
      return candidateKey(e.suite, e.candidate);
    case 'RowStateChanged':
      return rowStateKey(e);
    case 'RunFinished':
      return e.suite + SEP + e.run_id;
    // one per row of the run, beside the row's trials: it follows them on their partition
    case 'RunRetracted':
      return trialKey(e);
    // a candidate's comparisons, confirmations and closed runs share its gates' partition
    case 'ComparisonDeclared':
    case 'ConfirmationRequested':
      return candidateKey(e.suite, e.candidate);
    case 'RunClosed':
    case 'AdaptiveRoundDecided':
      return candidateKey(e.suite, e.agent_version);
    case 'WindowAlertRaised':
      return windowAlertKey(e);
    // one compacted record per source partition of passk.traces
    case 'TraceWindowsUpdated':
      return windowsKey(e.source_partition);
    // one compacted record per partition of passk.decisions
    case 'GateBookSnapshot':
      return e.chunk ? gateBookChunkKey(e.partition, e.chunk.slot, e.chunk.index) : gateBookKey(e.partition);
  }
};

export const topicOf = (e: PasskEvent): Topic => TOPIC_OF[e.type];
