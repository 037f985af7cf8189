import { z } from 'zod';
import { AttemptRecord } from '../../schemas/events/decisions.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { Fold } from './fold.ts';
import { hashString } from './hash.ts';

export { AttemptRecord, CheckAnswer } from '../../schemas/events/decisions.ts';

/**
 * The state of one row for one agent version: every attempt seen, kept in a canonical order, so the
 * fold gives the same state whatever order distinct attempts arrive in and however often they are
 * redelivered. An event id seen before is ignored; one attempt per (run, attempt number) slot, and
 * when two events claim a slot the first one folded keeps it (a re-run cannot replace a verdict): the
 * first in the file for a report over files, the first in log order for the processors, which meet a
 * slot's events in one partition (issue 26, item 3). It has a schema so it can be checkpointed.
 * The report, compare and gate read it. The stream's row state (processors/folds/rowState.ts) is this state
 * plus its key, seq and counters, folded by the same rules (`toAttemptRecord`, `addAttempt`, `attemptOrder`,
 * `mergeTags`); its attempt record (`AttemptRecord`, schemas/events/decisions.ts) is the one on the changelog.
 */
export const RowState = z.object({ attempts: z.array(AttemptRecord), tags: z.array(z.string()) });
export type RowState = z.infer<typeof RowState>;

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Canonical attempt order: event time, then run, then attempt number; event_id breaks ties. */
export const attemptOrder = (a: AttemptRecord, b: AttemptRecord): number =>
  a.occurred_at - b.occurred_at || cmp(a.run_id, b.run_id) || a.attempt - b.attempt || cmp(a.event_id, b.event_id);

// one shared empty array for an attempt without checks or forbidden actions: a row's attempts are kept for the
// life of its state (every array in them survives to the old generation), and attempt arrays are never changed
// in place (frozen, so a change would throw rather than reach every attempt)
export const NO_CHECKS = Object.freeze([]) as unknown as AttemptRecord['checks'];
export const NO_ACTIONS = Object.freeze([]) as unknown as string[];
/** A row without tags: one shared, frozen empty array (tag arrays are replaced, never changed in place). */
export const NO_TAGS = Object.freeze([]) as unknown as string[];

/** At most this many distinct check lists are shared; past it a list is kept as it is. */
const MAX_SHARED_CHECKS = 4_096;
const sharedChecks = new Map<string, AttemptRecord['checks']>();

/**
 * One shared, frozen array per distinct list of checks with short answers: a row's attempts mostly answer
 * the same few checks the same few ways, and an array and an object per check per attempt were a fifth of
 * a restored row's memory at one attempt per row (bench/growth.ts). Check lists are never changed in place.
 */
export const shareChecks = (
  checks: readonly { name: string; answer: AttemptRecord['checks'][number]['answer'] }[],
): AttemptRecord['checks'] => {
  if (checks.length === 0) return NO_CHECKS;
  let key = '';
  for (const ch of checks) {
    const a = ch.answer;
    if (typeof a === 'string' && a.length > 32) return checks.map((c) => ({ name: c.name, answer: c.answer }));
    key += `${ch.name}\u0000${typeof a === 'string' ? 's' : a === null ? 'z' : typeof a === 'number' ? 'n' : 'b'}${String(a)}\u0000`;
  }
  const have = sharedChecks.get(key);
  if (have !== undefined) return have;
  const made = Object.freeze(
    checks.map((c) => Object.freeze({ name: c.name, answer: c.answer })),
  ) as unknown as AttemptRecord['checks'];
  if (sharedChecks.size < MAX_SHARED_CHECKS && key.length <= 256) sharedChecks.set(key, made);
  return made;
};

/** What the fold reads of a trial (a TrialRecorded is one; the store's explorer reads only these columns). */
export type AttemptSource = Pick<
  TrialRecorded,
  | 'event_id'
  | 'run_id'
  | 'attempt'
  | 'occurred_at'
  | 'passed'
  | 'output'
  | 'checks'
  | 'forbidden_actions'
  | 'tags'
  | 'failure_category'
  | 'latency_ms'
  | 'cost_usd'
>;

export const toAttemptRecord = (e: AttemptSource): AttemptRecord => {
  const a: AttemptRecord = {
    event_id: e.event_id,
    run_id: e.run_id,
    attempt: e.attempt,
    occurred_at: e.occurred_at,
    passed: e.passed,
    output_hash: e.output === undefined || e.output === null ? null : hashString(e.output),
    checks: e.checks === undefined ? NO_CHECKS : shareChecks(e.checks),
    forbidden_actions:
      e.forbidden_actions === undefined || e.forbidden_actions.length === 0 ? NO_ACTIONS : [...e.forbidden_actions],
  };
  withExtras(a, e);
  return a;
};

/**
 * Copies what the Rows view reads of a trial besides its answer (failure category, latency, cost) onto its
 * attempt record, each only where the trial has one (so a record without them keeps its old shape and text).
 */
export const withExtras = (
  a: AttemptRecord,
  e: Pick<AttemptRecord, 'failure_category' | 'latency_ms' | 'cost_usd'>,
): void => {
  if (e.failure_category !== undefined && e.failure_category !== null) a.failure_category = e.failure_category;
  if (e.latency_ms !== undefined) a.latency_ms = e.latency_ms;
  if (e.cost_usd !== undefined) a.cost_usd = e.cost_usd;
};

/** What places an attempt in its row: its event, and the (run, attempt number) slot it fills. */
export type AttemptSlot = Readonly<{ event_id: string; run_id: string; attempt: number }>;

/**
 * The de-duplication rule of a row's attempts, the one implementation behind both folds (this
 * offline one and the stream's, processors/folds/rowState.ts): `rec` added to `attempts`, which
 * are sorted by `order`. Null when it changes nothing: its event id was seen before (a redelivery
 * never counts twice), or its (run, attempt) slot is already held (the first answer folded keeps
 * it: a re-run cannot replace a verdict; the processors dead-letter such a trial as a conflict,
 * `slotConflict`). Otherwise a new sorted array.
 */
export const addAttempt = <A extends AttemptSlot>(
  attempts: readonly A[],
  rec: A,
  order: (a: A, b: A) => number,
): A[] | null => {
  const next = attempts.slice();
  return addAttemptInPlace(next, rec, order) ? next : null;
};

/**
 * `addAttempt` on an array the caller owns (the stream's per-partition state, copied when emitted):
 * `attempts` is changed in place. False when it changes nothing.
 */
export const addAttemptInPlace = <A extends AttemptSlot>(
  attempts: A[],
  rec: A,
  order: (a: A, b: A) => number,
): boolean => {
  for (let i = 0; i < attempts.length; i++) {
    const a = attempts[i]!;
    if (a.event_id === rec.event_id || (a.attempt === rec.attempt && a.run_id === rec.run_id)) return false;
  }
  // from the end: attempts mostly arrive in order, and then it is a push (splice, a generic builtin that
  // also builds an array of what it removed, was a third of this function)
  let at = attempts.length;
  while (at > 0 && order(rec, attempts[at - 1]!) < 0) at--;
  if (at === attempts.length) attempts.push(rec);
  else {
    attempts.push(attempts[attempts.length - 1]!);
    for (let i = attempts.length - 2; i > at; i--) attempts[i] = attempts[i - 1]!;
    attempts[at] = rec;
  }
  return true;
};

/** A row's tags with a trial's added: a sorted union (the same rule in the stream's fold, folds/rowState.ts). */
export const mergeTags = (tags: readonly string[], more: readonly string[] | undefined): string[] =>
  more === undefined || more.every((t) => tags.includes(t))
    ? tags.length === 0
      ? NO_TAGS
      : [...tags]
    : [...new Set([...tags, ...more])].sort();

export const rowState: Fold<RowState, AttemptSource> = {
  initial: () => ({ attempts: [], tags: [] }),
  evolve: (state, e) => {
    const added = addAttempt(state.attempts, toAttemptRecord(e), attemptOrder);
    return added === null ? state : { attempts: added, tags: mergeTags(state.tags, e.tags) };
  },
};

/** What a row's state is keyed by: (suite, dataset version, agent version, row). */
export type GroupKey = Readonly<{ suite: string; dataset_version: string; agent_version: string }>;
export type RowKey = GroupKey & Readonly<{ row_id: string }>;

export const rowKeyOf = (e: TrialRecorded): RowKey => ({
  suite: e.suite,
  dataset_version: e.dataset_version,
  agent_version: e.agent.version,
  row_id: e.row_id,
});
