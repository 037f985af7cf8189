import { z } from 'zod';
import { RowAttempt, StabilityClass, type RowStateChanged } from '../../schemas/events/decisions.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { rowStateKey } from '../../schemas/topics.ts';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../core/classify.ts';
import { hashString } from '../core/hash.ts';
import { addAttempt, mergeTags } from '../core/rowState.ts';

/**
 * Per-row trial state for one (suite, dataset version, agent version, row): every attempt kept once,
 * n graded, c passed, ungraded, and the stability class. The state is a function of the *set* of
 * trials seen, whatever their arrival order or repetition, by the core's rule (`addAttempt`, shared
 * with the offline fold in core/rowState.ts):
 * - an event id seen before is ignored (de-duplication by `event_id`);
 * - one slot per (run, attempt): when two events claim the same slot, the smaller event id wins.
 *   Event ids are time-sortable ULIDs, so that is the first one recorded (no re-run shopping).
 * This is the stream's incremental form of that fold: counts kept alongside, a changelog schema.
 * Only `seq` (changes so far) and `occurred_at` (latest event time that changed the row) depend on
 * the order, and the order per key is the log's: a replay gives them back exactly.
 */
/** One kept attempt: the changelog's attempt record, as it is defined there (RowAttempt). */
export const AttemptRecord = RowAttempt;
export type AttemptRecord = RowAttempt;

export const RowState = z.object({
  suite: z.string(),
  dataset_version: z.string(),
  agent_version: z.string(),
  row_id: z.string(),
  /** Changes so far: 1 after the first trial. The changelog (and the sink) keeps the highest. */
  seq: z.number().int().nonnegative(),
  /** Latest event time among the kept attempts. */
  occurred_at: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  c: z.number().int().nonnegative(),
  ungraded: z.number().int().nonnegative(),
  class: StabilityClass,
  /** Sorted by (attempt, run_id). */
  attempts: z.array(AttemptRecord),
  /** The union of the kept trials' tags, sorted; absent when they had none. */
  tags: z.array(z.string()).optional(),
});
export type RowState = z.infer<typeof RowState>;

export interface RowFoldOptions {
  /** Graded attempts needed before a row is classified. @default 3 */
  readonly minAttempts?: number;
}

/** The key of the row a trial folds into: its row state's key (`rowStateKey`, schemas/topics.ts). */
export const trialRowKey = (t: TrialRecorded): string =>
  rowStateKey({ suite: t.suite, dataset_version: t.dataset_version, agent_version: t.agent.version, row_id: t.row_id });

export const attemptOf = (t: TrialRecorded): AttemptRecord => {
  const a: AttemptRecord = { attempt: t.attempt, run_id: t.run_id, event_id: t.event_id, passed: t.passed };
  if (t.output !== undefined) a.output = t.output === null ? null : hashString(t.output);
  if (t.checks && t.checks.length > 0) {
    const checks: Record<string, string | number | boolean | null> = {};
    for (const ch of t.checks) checks[ch.name] = ch.answer;
    a.checks = checks;
  }
  if (t.forbidden_actions && t.forbidden_actions.length > 0) a.forbidden_actions = [...t.forbidden_actions];
  return a;
};

/** Slot order: attempt number, then run id (code-unit order, never locale-dependent). */
export const slotOrder = (a: AttemptRecord, b: AttemptRecord): number =>
  a.attempt - b.attempt || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0);

type RowBase = Pick<RowState, 'suite' | 'dataset_version' | 'agent_version' | 'row_id' | 'seq' | 'attempts' | 'tags'>;
type Counts = Pick<RowState, 'n' | 'c' | 'ungraded'>;

const countOf = (a: AttemptRecord): Counts => ({
  n: a.passed === null ? 0 : 1,
  c: a.passed === true ? 1 : 0,
  ungraded: a.passed === null ? 1 : 0,
});

/** Builds the state with its keys in schema order, so an evolved and a restored state serialize alike. */
const build = (b: RowBase, k: Counts, minAttempts: number, occurredAt: number): RowState => ({
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
  ...(b.tags && b.tags.length > 0 ? { tags: b.tags } : {}),
});

/**
 * Adds one trial to its row (undefined: the row's first trial). Returns the same object when the
 * trial changes nothing (a duplicate, or a later event id for a taken slot): callers test identity.
 */
export const evolveRow = (state: RowState | undefined, trial: TrialRecorded, opts: RowFoldOptions = {}): RowState => {
  const minAttempts = opts.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  const a = attemptOf(trial);
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
  const added = addAttempt(state.attempts, a, slotOrder); // the core's de-duplication rule
  if (added === null) return state;
  const sub = added.displaced ? countOf(added.displaced) : { n: 0, c: 0, ungraded: 0 };
  const counts = {
    n: state.n + add.n - sub.n,
    c: state.c + add.c - sub.c,
    ungraded: state.ungraded + add.ungraded - sub.ungraded,
  };
  return build(
    { ...state, seq: state.seq + 1, attempts: added.attempts, tags: mergeTags(state.tags ?? [], trial.tags) },
    counts,
    minAttempts,
    Math.max(state.occurred_at, trial.occurred_at),
  );
};

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const base32 = (value: number, chars: number): string => {
  const out = new Array<string>(chars);
  for (let i = chars - 1, v = value; i >= 0; i--, v = Math.floor(v / 32)) out[i] = CROCKFORD[v % 32]!;
  return out.join('');
};

/**
 * The changelog record's event id: ULID-shaped, its time the row's event time, its other 80 bits
 * a 53-bit hash of the row key (cyrb53, 11 characters) then the seq (5 characters, mod 2^25):
 * a replay re-emits the same bytes. Not sha256: this runs once per changed row per commit, on the
 * topology's hot path.
 */
export const changelogEventId = (s: RowState): string =>
  base32(s.occurred_at, 10) + base32(parseInt(hashString(rowStateKey(s)), 36), 11) + base32(s.seq % 2 ** 25, 5);

/** The changelog record of a row state. Its event id is derived from (key, seq): a replay re-emits the same bytes. */
export const toRowStateChanged = (s: RowState, producer: string): RowStateChanged => ({
  event_id: changelogEventId(s),
  type: 'RowStateChanged',
  schema_version: 1,
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
  attempts: s.attempts,
  ...(s.tags ? { tags: s.tags } : {}),
});

/**
 * The row state a changelog record holds (restore). The record was validated once, when decoded (the
 * codec), so it is copied field by field in RowState's order, not parsed again (a second zod pass cost
 * restore 2–3× over JSON.parse, docs/performance.md).
 */
export const fromRowStateChanged = (e: RowStateChanged): RowState => ({
  suite: e.suite,
  dataset_version: e.dataset_version,
  agent_version: e.agent_version,
  row_id: e.row_id,
  seq: e.seq,
  occurred_at: e.occurred_at,
  n: e.n,
  c: e.c,
  ungraded: e.ungraded,
  class: e.class,
  attempts: e.attempts.map((a) => {
    const copy: AttemptRecord = { attempt: a.attempt, run_id: a.run_id, event_id: a.event_id, passed: a.passed };
    if (a.output !== undefined) copy.output = a.output;
    if (a.checks !== undefined) copy.checks = { ...a.checks };
    if (a.forbidden_actions !== undefined) copy.forbidden_actions = [...a.forbidden_actions];
    return copy;
  }),
  ...(e.tags ? { tags: [...e.tags] } : {}),
});
