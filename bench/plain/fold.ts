/**
 * The fold of the plain-code baselines (bench/plain/embeddedProcess.ts, kafkaProcess.ts): each trial folded into its
 * row in place (attempts de-duplicated and ordered by the core's rules, counts kept alongside), and per unit one
 * `RowStateChanged` per changed row, serialized once for the changelog and once as its `row_state` row. The rows and
 * records are built by the same mappings passk stores them with, so the stores hold the same bytes.
 */
import { PROCESSORS_PRODUCER } from '../../deploy/storeSinks.ts';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../../processors/core/classify.ts';
import {
  addAttemptInPlace,
  attemptOrder,
  mergeTags,
  NO_TAGS,
  toAttemptRecord,
  type AttemptRecord,
} from '../../processors/core/rowState.ts';
import { changelogEventId, type StreamRowState } from '../../processors/folds/rowState.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { rowKey } from '../../schemas/topics.ts';
import { eventToRow } from '../../sinks/clickhouse/rows/eventRows.ts';

interface Row {
  key: string;
  suite: string;
  dataset_version: string;
  agent_version: string;
  row_id: string;
  seq: number;
  occurred_at: number;
  n: number;
  c: number;
  ungraded: number;
  attempts: AttemptRecord[];
  tags: string[];
}

const recordOf = (r: Row): RowStateChanged => {
  const e: RowStateChanged = {
    event_id: changelogEventId(r as unknown as StreamRowState, r.key),
    type: 'RowStateChanged',
    schema_version: 2,
    occurred_at: r.occurred_at,
    producer: PROCESSORS_PRODUCER,
    suite: r.suite,
    dataset_version: r.dataset_version,
    agent_version: r.agent_version,
    row_id: r.row_id,
    seq: r.seq,
    n: r.n,
    c: r.c,
    ungraded: r.ungraded,
    class: classOf(r.n, r.c, DEFAULT_MIN_ATTEMPTS),
    attempt_records: r.attempts,
  };
  if (r.tags.length > 0) e.tags = r.tags;
  return e;
};

/** A unit folded: its `trials` and `row_state` rows as JSON lines, and its changelog records. */
export interface PlainUnit {
  readonly trialLines: string[];
  readonly stateLines: string[];
  readonly changelog: { key: string; value: Buffer }[];
}

/** Folds units of trials into the rows it keeps; `rows()`: how many. */
export const plainFold = (): { fold: (trials: readonly TrialRecorded[]) => PlainUnit; rows: () => number } => {
  const table = new Map<string, Row>();
  const fold = (trials: readonly TrialRecorded[]): PlainUnit => {
    const trialLines: string[] = [];
    const changed = new Set<Row>();
    for (const t of trials) {
      trialLines.push(JSON.stringify(eventToRow(t)!.row));
      const key = rowKey(t.suite, t.dataset_version, t.agent.version, t.row_id);
      let row = table.get(key);
      if (!row)
        table.set(
          key,
          (row = {
            key,
            suite: t.suite,
            dataset_version: t.dataset_version,
            agent_version: t.agent.version,
            row_id: t.row_id,
            seq: 0,
            occurred_at: 0,
            n: 0,
            c: 0,
            ungraded: 0,
            attempts: [],
            tags: NO_TAGS,
          }),
        );
      if (!addAttemptInPlace(row.attempts, toAttemptRecord(t), attemptOrder)) continue;
      row.seq++;
      row.occurred_at = Math.max(row.occurred_at, t.occurred_at);
      if (t.passed === null) row.ungraded++;
      else {
        row.n++;
        if (t.passed) row.c++;
      }
      if (t.tags !== undefined) row.tags = mergeTags(row.tags, t.tags);
      changed.add(row);
    }
    const stateLines: string[] = [];
    const changelog: { key: string; value: Buffer }[] = [];
    for (const row of changed) {
      const e = recordOf(row);
      changelog.push({ key: row.key, value: Buffer.from(JSON.stringify(e)) });
      stateLines.push(JSON.stringify(eventToRow(e)!.row));
    }
    return { trialLines, stateLines, changelog };
  };
  return { fold, rows: () => table.size };
};
