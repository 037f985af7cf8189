import { createHash } from 'node:crypto';
import { ANSWER_FIELDS, type TrialRecorded } from '../schemas/events/trialRecorded.ts';

/**
 * One answer per trial identity, as the producers see it (the ingest API, the SDK's recorder; `passk import` has
 * its own notion, the same rule): a trial's identity is its attempt slot (suite, dataset version, agent version,
 * run, row, attempt). The same slot again with the same event id and content is a duplicate; under another event
 * id, or with other content, a conflict, refused naming both event ids. The processors apply the same rule to
 * what reaches the log another way (processors/folds/rowState.ts, `slotConflict`).
 */

/** A trial's attempt slot: its identity. */
export const trialSlot = (t: TrialRecorded): string =>
  JSON.stringify([t.suite, t.dataset_version, t.agent.version, t.run_id, t.row_id, t.attempt]);

/** A short digest of a JSON value: what the memory keeps instead of the value (an output may be megabytes). */
const digest = (v: unknown): string =>
  createHash('sha1')
    .update(JSON.stringify(v) ?? 'undefined')
    .digest('base64')
    .slice(0, 12);

/**
 * What a trial answers, as digests (producers also refuse a re-send whose other content, its grader, cost or
 * metadata, differs, under the name `content`: the processors would keep the first silently): one per answer field, then one of the rest of its content (without its
 * envelope: a re-send without a time is dated when received). 64 bytes a slot, whatever the trial's size.
 */
export const trialContent = (t: TrialRecorded): string => {
  const { event_id: _id, occurred_at: _at, producer: _p, ...content } = t;
  const rest: Record<string, unknown> = { ...content };
  for (const f of ANSWER_FIELDS) delete rest[f];
  return [...ANSWER_FIELDS.map((f) => digest(content[f] ?? null)), digest(rest)].join(' ');
};

/** The first field two trials' contents (`trialContent`) differ in: an answer field, else `content`. */
export const firstDifference = (a: string, b: string): string => {
  const x = a.split(' ');
  const y = b.split(' ');
  const at = x.findIndex((d, i) => d !== y[i]);
  return at < 0 ? '(root)' : (ANSWER_FIELDS[at] ?? 'content');
};

/** A refused trial: the field it differs in and the event id that answered its slot first. */
export interface TrialConflict {
  readonly field: string;
  readonly prior: string;
  readonly reason: string;
}

export interface SlotMemory {
  /** The conflict `t` makes with the slot's remembered answer, if any (undefined: new, or the same again). */
  conflictOf(t: TrialRecorded): TrialConflict | undefined;
  /** Whether `t` is its slot's remembered answer (the same event id and content): a re-send. */
  knows(t: TrialRecorded): boolean;
  /** Remembers `t` as its slot's answer, unless the slot has one (the first answer stands). */
  note(t: TrialRecorded): void;
  readonly size: number;
}

/** The reason of a refusal: the slot, both event ids, and the field. */
export const conflictReason = (t: TrialRecorded, prior: string, field: string, verb = 'accepted'): string =>
  `conflict: attempt ${t.attempt} of row ${t.row_id} (run ${t.run_id}, agent ${t.agent.version}) was ${verb} as ` +
  `event ${prior}; this one, event ${t.event_id}, differs in ${field}: passk keeps one answer per attempt`;

/** The slots of the last `remember` trials noted (oldest forgotten first). */
export const createSlotMemory = (remember: number, verb = 'accepted'): SlotMemory => {
  const slots = new Map<string, { event_id: string; content: string }>();
  return {
    conflictOf: (t) => {
      const prior = slots.get(trialSlot(t));
      if (prior === undefined) return undefined;
      const content = trialContent(t);
      if (prior.event_id === t.event_id && prior.content === content) return undefined;
      const field = prior.event_id !== t.event_id ? 'event_id' : firstDifference(prior.content, content);
      return { field, prior: prior.event_id, reason: conflictReason(t, prior.event_id, field, verb) };
    },
    knows: (t) => {
      const prior = slots.get(trialSlot(t));
      return prior !== undefined && prior.event_id === t.event_id && prior.content === trialContent(t);
    },
    note: (t) => {
      const slot = trialSlot(t);
      if (slots.has(slot)) return;
      slots.set(slot, { event_id: t.event_id, content: trialContent(t) });
      if (slots.size > remember) slots.delete(slots.keys().next().value!);
    },
    get size() {
      return slots.size;
    },
  };
};
