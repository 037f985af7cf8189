import { z } from 'zod';
import { StabilityClass, type RowStateChanged } from '../../schemas/events/decisions.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { rowKey, rowStateKey } from '../../schemas/topics.ts';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../core/classify.ts';
import { hash53 } from '../core/hash.ts';
import {
  addAttempt,
  attemptOrder,
  mergeTags,
  NO_ACTIONS,
  NO_TAGS,
  RowState as CoreRowState,
  shareChecks,
  withExtras,
  toAttemptRecord,
  type AttemptRecord,
} from '../core/rowState.ts';

/**
 * Per-row trial state for one (suite, dataset version, agent version, row): the core's row state
 * (core/rowState.ts: the same attempt records in the same canonical order, the same tags) plus its
 * key, `seq` and the counters n graded, c passed, ungraded and the stability class, kept
 * incrementally. The state is a function of the *set* of trials seen, whatever their arrival order or
 * repetition, by the core's rules (`toAttemptRecord`, `addAttempt`, `attemptOrder`, `mergeTags`):
 * - an event id seen before with the same content is ignored (de-duplication by `event_id`);
 * - one answer per (run, attempt) slot: a later event for a taken slot under another event id, or under the same
 *   id with another answer (verdict, output, checks, forbidden actions), is a conflict (`slotConflict`), never
 *   folded: the processors dead-letter it. The first of a slot in log order answers; every event of a row has
 *   the row's key, so they share a partition and a replay meets them in the same order.
 * Without conflicts the state is a function of the set of trials; `seq` (changes so far) and `occurred_at`
 * (latest event time that changed the row) depend on the order, and the order per key is the log's: a replay
 * gives them back exactly. A stream row
 * state *is* a core row state: the report, compare and gate read it as it is. Its name says which one it is:
 * core/rowState.ts's `RowState` is the attempts and tags alone; this one, keyed and counted, is `StreamRowState`.
 */
export const StreamRowState = z.object({
  suite: z.string(),
  dataset_version: z.string(),
  agent_version: z.string(),
  row_id: z.string(),
  /** Changes so far: 1 after the first trial. The changelog (and the sink) keeps the highest. */
  seq: z.number().int().nonnegative(),
  /** Latest event time among the trials that changed the row. */
  occurred_at: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  c: z.number().int().nonnegative(),
  ungraded: z.number().int().nonnegative(),
  class: StabilityClass,
  /** The core's state: attempts in the core's canonical order (`attemptOrder`), tags sorted (empty = none). */
  ...CoreRowState.shape,
  /**
   * Runs retracted on this row (RunRetracted), sorted; absent when none. Their attempts are gone from
   * `attempts`, and a trial of one of them that arrives later is not counted.
   */
  retracted_runs: z.array(z.string()).optional(),
});
export type StreamRowState = z.infer<typeof StreamRowState>;

export interface RowFoldOptions {
  /** Graded attempts needed before a row is classified. @default 3 */
  readonly minAttempts?: number;
}

/** The key of the row a trial folds into: its row state's key (`rowStateKey`, schemas/topics.ts). */
export const trialRowKey = (t: TrialRecorded): string => rowKey(t.suite, t.dataset_version, t.agent.version, t.row_id);

/**
 * Why `b` answers its slot otherwise than `a`, the attempt already folded: the first field they differ in, in the
 * order of `ANSWER_FIELDS` (schemas/events/trialRecorded.ts), which the producers' slot memory names too.
 */
const differingField = (a: AttemptRecord, b: AttemptRecord): string | undefined => {
  if (a.passed !== b.passed) return 'passed';
  if (a.output_hash !== b.output_hash) return 'output';
  if (
    a.checks.length !== b.checks.length ||
    a.checks.some(
      (c, i) => c.name !== b.checks[i]!.name || JSON.stringify(c.answer) !== JSON.stringify(b.checks[i]!.answer),
    )
  )
    return 'checks';
  if (
    a.forbidden_actions.length !== b.forbidden_actions.length ||
    a.forbidden_actions.some((x, i) => x !== b.forbidden_actions[i])
  )
    return 'forbidden_actions';
  // the same answer under another event id is still a second answer for the slot: named last, after the content
  if (a.event_id !== b.event_id) return 'event_id';
  return undefined;
};

/** A trial that answers a slot its row already holds otherwise: the attempt folded first, and the first field they differ in. */
export interface SlotConflict {
  readonly held: AttemptRecord;
  readonly field: string;
}

/**
 * The conflict `rec` (a trial's attempt record) makes with a row's attempts, if any: its (run, attempt) slot is
 * held by another event id, or by the same event id with another answer. Undefined for a new slot or the same
 * event again (a duplicate: `addAttempt` ignores it). The event time is not part of the answer (a re-send without
 * one is dated when received).
 */
export const slotConflict = (attempts: readonly AttemptRecord[], rec: AttemptRecord): SlotConflict | undefined => {
  for (const a of attempts) {
    if (a.attempt !== rec.attempt || a.run_id !== rec.run_id) continue;
    const field = differingField(a, rec);
    return field === undefined ? undefined : { held: a, field };
  }
  return undefined;
};

/** The dead letter's reason for a conflicting trial: both event ids, the slot and the field. */
export const conflictReason = (t: TrialRecorded, c: SlotConflict): string =>
  `conflict: attempt ${t.attempt} of row ${t.row_id} (run ${t.run_id}, agent ${t.agent.version}, suite ${t.suite}, ` +
  `dataset ${t.dataset_version}) was folded as event ${c.held.event_id}; this one, event ${t.event_id}, differs ` +
  `in ${c.field}: passk keeps one answer per attempt`;

type RowBase = Pick<
  StreamRowState,
  'suite' | 'dataset_version' | 'agent_version' | 'row_id' | 'seq' | 'attempts' | 'tags'
>;
type Counts = Pick<StreamRowState, 'n' | 'c' | 'ungraded'>;

const countOf = (a: AttemptRecord): Counts => ({
  n: a.passed === null ? 0 : 1,
  c: a.passed === true ? 1 : 0,
  ungraded: a.passed === null ? 1 : 0,
});

/** Builds the state with its keys in schema order, so an evolved and a restored state serialize alike. */
const build = (b: RowBase, k: Counts, minAttempts: number, occurredAt: number): StreamRowState => ({
  suite: b.suite,
  dataset_version: b.dataset_version,
  agent_version: b.agent_version,
  row_id: b.row_id,
  seq: b.seq,
  occurred_at: occurredAt,
  n: k.n,
  c: k.c,
  ungraded: k.ungraded,
  class: classOf(k.n, k.c, minAttempts),
  attempts: b.attempts,
  tags: b.tags,
});

/**
 * Adds one trial to its row (undefined: the row's first trial). Returns the same object when the
 * trial changes nothing (a duplicate, or a conflict for a taken slot, `slotConflict`): callers test identity.
 */
export const evolveRow = (
  state: StreamRowState | undefined,
  trial: TrialRecorded,
  opts: RowFoldOptions = {},
): StreamRowState => {
  const minAttempts = opts.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  if (state?.retracted_runs?.includes(trial.run_id)) return state;
  const a = toAttemptRecord(trial);
  const add = countOf(a);
  if (state === undefined) {
    const base = {
      suite: trial.suite,
      dataset_version: trial.dataset_version,
      agent_version: trial.agent.version,
      row_id: trial.row_id,
    };
    return build(
      { ...base, seq: 1, attempts: [a], tags: mergeTags([], trial.tags) },
      add,
      minAttempts,
      trial.occurred_at,
    );
  }
  if (slotConflict(state.attempts, a) !== undefined) return state; // one answer per slot: never folded
  const added = addAttempt(state.attempts, a, attemptOrder); // the core's de-duplication rule and order
  if (added === null) return state;
  const counts = { n: state.n + add.n, c: state.c + add.c, ungraded: state.ungraded + add.ungraded };
  return withRetracted(
    build(
      { ...state, seq: state.seq + 1, attempts: added, tags: mergeTags(state.tags, trial.tags) },
      counts,
      minAttempts,
      Math.max(state.occurred_at, trial.occurred_at),
    ),
    state.retracted_runs,
  );
};

const withRetracted = (s: StreamRowState, runs: readonly string[] | undefined): StreamRowState =>
  runs === undefined || runs.length === 0 ? s : { ...s, retracted_runs: [...runs] };

/** Whether a row holds no attempt (every one it had was retracted): it counts as no row at all. */
export const isEmptyRow = (r: Pick<StreamRowState, 'n' | 'ungraded'>): boolean => r.n === 0 && r.ungraded === 0;

/**
 * Takes a retracted run's attempts out of its row (undefined: the row has no trial yet, and gets an
 * empty state that remembers the retraction). Returns the same object when the run was already
 * retracted on the row: callers test identity. Tags stay (they describe the dataset row, not a run).
 * A row left with no attempt keeps its key and `seq` (so a replay gives the same changelog) and
 * counts as no row in the version's summary and every view (`isEmptyRow`).
 */
export const retractRow = (
  state: StreamRowState | undefined,
  r: RunRetracted,
  opts: RowFoldOptions = {},
): StreamRowState => {
  if (state?.retracted_runs?.includes(r.run_id)) return state;
  const minAttempts = opts.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  const attempts = (state?.attempts ?? []).filter((a) => a.run_id !== r.run_id);
  const counts = { n: 0, c: 0, ungraded: 0 };
  for (const a of attempts) {
    const k = countOf(a);
    counts.n += k.n;
    counts.c += k.c;
    counts.ungraded += k.ungraded;
  }
  const runs = [...(state?.retracted_runs ?? []), r.run_id].sort();
  return withRetracted(
    build(
      {
        suite: r.suite,
        dataset_version: r.dataset_version,
        agent_version: r.agent_version,
        row_id: r.row_id,
        seq: (state?.seq ?? 0) + 1,
        attempts,
        tags: state?.tags ?? NO_TAGS,
      },
      counts,
      minAttempts,
      Math.max(state?.occurred_at ?? 0, r.occurred_at),
    ),
    runs,
  );
};

/** The key of the row a retraction applies to: its row state's key. */
export const retractionRowKey = (r: RunRetracted): string =>
  rowKey(r.suite, r.dataset_version, r.agent_version, r.row_id);

/** Each Crockford base-32 digit's character code. */
const CODE = Array.from('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (c) => c.charCodeAt(0));

/**
 * The changelog record's event id: ULID-shaped, its time the row's event time, its other 80 bits
 * a 53-bit hash of the row key (cyrb53, 11 characters) then the seq (5 characters, mod 2^25):
 * a replay re-emits the same bytes. Not sha256: this runs once per changed row per commit, on the
 * topology's hot path. Built in one `String.fromCharCode` of its 26 codes, one string allocated: the
 * key's hash computed each time costs less than looking it up by a key string that each event builds
 * anew (and the 13 concatenations of two-character groups before were most of the cost);
 * test/processors/rowState.unit.test.ts pins the bytes to the first definition.
 */
export const changelogEventId = (s: StreamRowState, key: string = rowStateKey(s)): string => {
  let t = s.occurred_at; // < 2^48: 10 characters, 5 groups of 10 bits, the lowest first
  const t0 = t % 1024;
  t = Math.floor(t / 1024);
  const t1 = t % 1024;
  t = Math.floor(t / 1024);
  const t2 = t % 1024;
  t = Math.floor(t / 1024);
  const t3 = t % 1024;
  const t4 = Math.floor(t / 1024) % 1024;
  let h = hash53(key); // < 2^53: 11 characters, a digit then 5 groups, the lowest first
  const k0 = h % 1024;
  h = Math.floor(h / 1024);
  const k1 = h % 1024;
  h = Math.floor(h / 1024);
  const k2 = h % 1024;
  h = Math.floor(h / 1024);
  const k3 = h % 1024;
  h = Math.floor(h / 1024);
  const k4 = h % 1024;
  const k5 = Math.floor(h / 1024) % 32;
  const q = s.seq % 2 ** 25; // 5 characters
  const C = CODE;
  return String.fromCharCode(
    C[t4 >> 5]!,
    C[t4 & 31]!,
    C[t3 >> 5]!,
    C[t3 & 31]!,
    C[t2 >> 5]!,
    C[t2 & 31]!,
    C[t1 >> 5]!,
    C[t1 & 31]!,
    C[t0 >> 5]!,
    C[t0 & 31]!,
    C[k5]!,
    C[k4 >> 5]!,
    C[k4 & 31]!,
    C[k3 >> 5]!,
    C[k3 & 31]!,
    C[k2 >> 5]!,
    C[k2 & 31]!,
    C[k1 >> 5]!,
    C[k1 & 31]!,
    C[k0 >> 5]!,
    C[k0 & 31]!,
    C[(q >> 20) & 31]!,
    C[(q >> 15) & 31]!,
    C[(q >> 10) & 31]!,
    C[(q >> 5) & 31]!,
    C[q & 31]!,
  );
};

/**
 * The changelog record of a row state. Its event id is derived from (key, seq): a replay re-emits the same bytes.
 * `key`: the row's `rowStateKey`, when the caller holds it (the topology's table key).
 */
export const toRowStateChanged = (s: StreamRowState, producer: string, key?: string): RowStateChanged => ({
  event_id: changelogEventId(s, key),
  type: 'RowStateChanged',
  schema_version: 2,
  occurred_at: s.occurred_at,
  producer,
  suite: s.suite,
  dataset_version: s.dataset_version,
  agent_version: s.agent_version,
  row_id: s.row_id,
  seq: s.seq,
  n: s.n,
  c: s.c,
  ungraded: s.ungraded,
  class: s.class,
  // a copy: the topology's rows are changed in place after their record is built (tag arrays never are); but for a
  // frozen row's, which nothing changes (the in-place fold copies a frozen row before its change: `foldTrialsInto`)
  attempt_records: Object.isFrozen(s) ? s.attempts : s.attempts.slice(),
  ...(s.tags.length > 0 ? { tags: s.tags } : {}),
  ...(s.retracted_runs !== undefined && s.retracted_runs.length > 0
    ? { retracted_runs: s.retracted_runs.slice() }
    : {}),
});

// the record's arrays are not kept: the empty ones and the common check lists are shared (core/rowState.ts), so a
// restored row holds what a folded one does
const copyAttempt = (a: AttemptRecord): AttemptRecord => {
  const c: AttemptRecord = {
    event_id: a.event_id,
    run_id: a.run_id,
    attempt: a.attempt,
    occurred_at: a.occurred_at,
    passed: a.passed,
    output_hash: a.output_hash,
    checks: shareChecks(a.checks),
    forbidden_actions: a.forbidden_actions.length === 0 ? NO_ACTIONS : [...a.forbidden_actions],
  };
  withExtras(c, a);
  return c;
};

const inOrder = (attempts: readonly AttemptRecord[]): boolean => {
  for (let i = 1; i < attempts.length; i++) if (attemptOrder(attempts[i - 1]!, attempts[i]!) > 0) return false;
  return true;
};

/** The class as one of the four literals: a decoded record's is a string of its own (longer than V8 shares). */
const sharedClass = (c: StabilityClass): StabilityClass =>
  c === 'stable_correct'
    ? 'stable_correct'
    : c === 'stable_wrong'
      ? 'stable_wrong'
      : c === 'flip'
        ? 'flip'
        : c === 'unclassified'
          ? 'unclassified'
          : c;

/**
 * The row state a changelog record holds (restore). The record was validated once, when decoded (the
 * codec, which also turns a schema version 1 record's attempts into attempt records), so it is copied
 * field by field in StreamRowState's order, not parsed again (a second zod pass cost restore 2–3× over
 * JSON.parse, docs/performance.md). A version 1 record kept its attempts in slot order (attempt, run):
 * they are put back in the canonical order.
 */
export const fromRowStateChanged = (e: RowStateChanged): StreamRowState => {
  const attempts = e.attempt_records.map(copyAttempt);
  if (!inOrder(attempts)) attempts.sort(attemptOrder);
  // a literal of the fold's shape (build's), the runs added after: a spread in the literal gave each restored
  // row a larger object than a folded one
  const s: StreamRowState = {
    suite: e.suite,
    dataset_version: e.dataset_version,
    agent_version: e.agent_version,
    row_id: e.row_id,
    seq: e.seq,
    occurred_at: e.occurred_at,
    n: e.n,
    c: e.c,
    ungraded: e.ungraded,
    class: sharedClass(e.class),
    attempts,
    tags: e.tags !== undefined && e.tags.length > 0 ? [...e.tags] : NO_TAGS,
  };
  if (e.retracted_runs !== undefined && e.retracted_runs.length > 0) s.retracted_runs = [...e.retracted_runs];
  return s;
};
