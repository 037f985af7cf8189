import { z } from 'zod';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { rowStateKey } from '../../schemas/topics.ts';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../core/classify.ts';
import { addAttemptInPlace, attemptOrder, mergeTags, toAttemptRecord, type AttemptRecord } from '../core/rowState.ts';
import {
  evolveRow,
  retractionRowKey,
  retractRow,
  slotConflict,
  StreamRowState,
  trialRowKey,
  type RowFoldOptions,
  type SlotConflict,
} from './rowState.ts';

/** What the trial fold takes, in the log's order: trials, and retractions of runs (row by row). */
export type RowEvent = TrialRecorded | RunRetracted;

/**
 * The keyed fold of one partition: row key → row state, in a Map. A plain loop over a batch, no
 * per-key streams (per-key `groupBy` measured 28× slower than this loop). The Map is owned by one
 * partition's fold and updated in place; with `foldTrials` each row state in it is immutable, with
 * `foldTrialsOwned` (the topology's) the rows are changed in place too and copied when emitted.
 */
export type RowTable = Map<string, StreamRowState>;

/** One row's change over a batch: its state before the batch (if any) and after. */
export interface RowChange {
  readonly key: string;
  readonly before: StreamRowState | undefined;
  readonly after: StreamRowState;
}

/**
 * What a fold did with each trial, when the caller asks: the trials it folded (in order), and the conflicts it
 * refused (`slotConflict`), each with the trial's index in the fold's input.
 */
export interface FoldOutcome {
  readonly folded: TrialRecorded[];
  readonly conflicts: { readonly index: number; readonly trial: TrialRecorded; readonly conflict: SlotConflict }[];
  /**
   * When given (`foldTrialsInto` only): the events that changed nothing because the row already holds them, each
   * with its index and row key: a trial whose very event (id, slot and answer) is one of the row's attempts, a
   * retraction the row already carries, and a trial of a run the row has retracted. The store's repair after a
   * restart reads them (operators/foldUnits.ts).
   */
  readonly repeated?: { readonly index: number; readonly key: string }[];
}

/** The row holds this very event: its id, in the same slot (the answer is the same: `slotConflict` found none). */
const holdsEvent = (attempts: readonly AttemptRecord[], a: AttemptRecord): boolean => {
  for (const x of attempts) if (x.event_id === a.event_id) return x.attempt === a.attempt && x.run_id === a.run_id;
  return false;
};

/** Folds a batch in order; returns the rows it changed, once each, in first-change order. */
export const foldTrials = (
  table: RowTable,
  trials: Iterable<RowEvent>,
  opts: RowFoldOptions = {},
  outcome?: FoldOutcome,
): RowChange[] => {
  const before = new Map<string, StreamRowState | undefined>();
  let index = -1;
  for (const t of trials) {
    index++;
    if (t.type === 'RunRetracted') {
      const key = retractionRowKey(t);
      const was = table.get(key);
      const now = retractRow(was, t, opts);
      if (now === was) continue;
      table.set(key, now);
      if (!before.has(key)) before.set(key, was);
      continue;
    }
    const key = trialRowKey(t);
    const was = table.get(key);
    if (was?.retracted_runs?.includes(t.run_id)) continue;
    if (outcome && was) {
      const conflict = slotConflict(was.attempts, toAttemptRecord(t));
      if (conflict) {
        outcome.conflicts.push({ index, trial: t, conflict });
        continue;
      }
    }
    const now = evolveRow(was, t, opts);
    if (now !== was) outcome?.folded.push(t);
    if (now === was) continue;
    table.set(key, now);
    if (!before.has(key)) before.set(key, was);
  }
  const changes: RowChange[] = [];
  for (const [key, was] of before) changes.push({ key, before: was, after: table.get(key)! });
  return changes;
};

/** What a version summary counts of a row (versionSummary.ts), as it was before a batch. */
export type RowTally = Pick<StreamRowState, 'n' | 'c' | 'ungraded' | 'class'>;

/**
 * One row's change over a fold of an owned table: its tally before its first change (undefined for a row
 * the fold created), and its state after. From `foldTrialsInto`, `after` is the table's own row, which the
 * next fold changes again; from `foldTrialsOwned`, it is a copy that later folds never reach.
 */
export interface OwnedRowChange {
  readonly key: string;
  readonly before: RowTally | undefined;
  readonly after: StreamRowState;
}

const weigh = (a: AttemptRecord, sign: 1 | -1, r: StreamRowState): void => {
  if (a.passed === null) r.ungraded += sign;
  else {
    r.n += sign;
    if (a.passed) r.c += sign;
  }
};

/**
 * Folds trials into a table the fold owns (the topology's per-partition state), in place: no new
 * state per event, no copies. Each row changed is put in `changed` once, at its first change, with its
 * tally then; a row already in `changed` keeps its entry, so one `changed` can collect a durable unit's
 * changes over all of its batches. The rule is `foldTrials`' (the core's `addAttempt`, in place;
 * `evolveRow` for a row's first trial; test/processors/foldOwned.unit.test.ts checks it against
 * `foldTrials`). The table's rows must not be shared: whoever keeps one past the next fold copies it, but for
 * frozen rows (a restore's, which the gates' row table shares): such a row is copied before its first change.
 */
export const foldTrialsInto = (
  table: RowTable,
  trials: Iterable<RowEvent>,
  changed: Map<string, OwnedRowChange>,
  opts: RowFoldOptions = {},
  outcome?: FoldOutcome,
): void => {
  const minAttempts = opts.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  let index = -1;
  for (const t of trials) {
    index++;
    if (t.type === 'RunRetracted') {
      // rare: a new row state, not an in-place change (the unit's entry is pointed at it)
      const key = retractionRowKey(t);
      const row = table.get(key);
      const now = retractRow(row, t, opts);
      if (now === row) {
        if (row !== undefined) outcome?.repeated?.push({ index, key });
        continue;
      }
      table.set(key, now);
      const had = changed.get(key);
      const before = had ? had.before : row && { n: row.n, c: row.c, ungraded: row.ungraded, class: row.class };
      changed.set(key, { key, before, after: now });
      continue;
    }
    const key = trialRowKey(t);
    let row = table.get(key);
    // a trial of a run retracted on this row never counts, whenever it arrives
    if (row?.retracted_runs?.includes(t.run_id)) {
      outcome?.repeated?.push({ index, key });
      continue;
    }
    if (row === undefined) {
      const made = evolveRow(undefined, t, opts);
      table.set(key, made);
      changed.set(key, { key, before: undefined, after: made });
      outcome?.folded.push(t);
      continue;
    }
    const a = toAttemptRecord(t);
    const conflict = slotConflict(row.attempts, a);
    if (conflict !== undefined) {
      // one answer per slot: never folded (the topology dead-letters it)
      outcome?.conflicts.push({ index, trial: t, conflict });
      continue;
    }
    // a restored row is shared with the gates' row table (frozen: `RowStore.restoring`): changed as a copy of its own
    if (Object.isFrozen(row)) table.set(key, (row = copyRow(row)));
    const n = row.n;
    const c = row.c;
    const ungraded = row.ungraded;
    const cls = row.class;
    // the core's de-duplication rule and order
    if (!addAttemptInPlace(row.attempts, a, attemptOrder)) {
      if (outcome?.repeated !== undefined && holdsEvent(row.attempts, a)) outcome.repeated.push({ index, key });
      continue;
    }
    outcome?.folded.push(t);
    if (!changed.has(key)) changed.set(key, { key, before: { n, c, ungraded, class: cls }, after: row });
    weigh(a, 1, row);
    row.class = classOf(row.n, row.c, minAttempts);
    row.seq += 1;
    if (t.occurred_at > row.occurred_at) row.occurred_at = t.occurred_at;
    if (t.tags !== undefined && t.tags.length > 0) {
      row.tags = mergeTags(row.tags, t.tags);
    }
  }
};

/** A copy of a row that later in-place folds do not reach (attempt records and tag arrays are never changed in place). */
const copyRow = (r: StreamRowState): StreamRowState => ({ ...r, attempts: r.attempts.slice() });

/**
 * `foldTrialsInto` one batch, its changed rows copied: the same changes as `foldTrials`' (the reference the
 * in-place fold is tested against).
 */
export const foldTrialsOwned = (
  table: RowTable,
  trials: Iterable<RowEvent>,
  opts: RowFoldOptions = {},
): OwnedRowChange[] => {
  const changed = new Map<string, OwnedRowChange>();
  foldTrialsInto(table, trials, changed, opts);
  return Array.from(changed.values(), (c) => ({ key: c.key, before: c.before, after: copyRow(c.after) }));
};

/** A checkpoint of a table: its rows sorted by key, so equal tables give equal bytes. */
export const RowTableCheckpoint = z.array(StreamRowState);
export type RowTableCheckpoint = z.infer<typeof RowTableCheckpoint>;

export const checkpointOf = (table: RowTable): RowTableCheckpoint => [...table.keys()].sort().map((k) => table.get(k)!);

export const restoreTable = (rows: Iterable<StreamRowState>): RowTable => {
  const table: RowTable = new Map();
  for (const r of rows) {
    const key = rowStateKey(r);
    const have = table.get(key);
    // the highest seq is the newest: a late write of an older state never wins
    if (have === undefined || have.seq < r.seq) table.set(key, r);
  }
  return table;
};
