import { InputError } from '../../schemas/errors.ts';
import { DEFAULT_REDACTORS, personalDataIn, redactText, redactValue } from './redact.ts';
import type { Redactor } from './text.ts';

/**
 * Strings longer than this are clipped before they are redacted. A stored text is at most 8,000 characters
 * (`clip`), so nothing past that is ever written; the margin lets a value that straddles the cut be found whole.
 */
export const REDACT_MAX_CHARS = 8_000 + 512;
/** Characters redacted in all in one trace's actions (whose arguments are stored whole, not clipped). */
export const REDACT_ACTIONS_BUDGET = 64 * 1024;

/**
 * Identity fields that key events and are stored as given (a trace id makes the event id; an agent version names the
 * version everything is compared by): redacting them would merge unrelated traces, so one that holds personal data
 * is refused instead, naming the field.
 */
/** A machine-made id (a UUID, a hex id such as a W3C trace id, a ULID): made by a program, it holds no one's data. */
const MACHINE_ID =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,64}|[0-9A-HJKMNP-TV-Z]{26})$/i;

export const checkIdentity = (field: string, value: string, redactors: readonly Redactor[] = DEFAULT_REDACTORS) => {
  if (MACHINE_ID.test(value)) return;
  const found = personalDataIn(value, redactors);
  if (found.length > 0)
    throw new InputError(
      `holds personal data (${found.join(', ')}); ids and versions are stored as they are, so they must carry none`,
      { field },
    );
};

/** The fields of a production trace that carry text (the sampler's candidate and the recorder's input share them). */
export interface TraceText {
  readonly trace_id: string;
  readonly agent_version: string;
  readonly segment?: string;
  readonly verdicts?: readonly { grader: string; passed: boolean | null; score?: number | null }[];
  readonly actions?: readonly { tool: string; arguments?: Record<string, unknown> }[];
  readonly user_signals?: Record<string, string | number | boolean>;
  readonly error_kind?: string | null;
  readonly tags?: readonly string[];
}

/** Trace-level fields redacted (segment, grader names, actions, user signals, error kind, tags), ids checked. */
export const redactTraceFields = <T extends TraceText>(t: T, redactors: readonly Redactor[] = DEFAULT_REDACTORS): T => {
  if (typeof t.trace_id === 'string') checkIdentity('trace_id', t.trace_id, redactors);
  if (typeof t.agent_version === 'string') checkIdentity('agent_version', t.agent_version, redactors);
  // anything of the wrong type is left as it is: the schema refuses it afterwards, naming the field
  const text = <V>(s: V): V =>
    typeof s === 'string'
      ? (redactText(s.length > REDACT_MAX_CHARS ? s.slice(0, REDACT_MAX_CHARS) : s, redactors) as V)
      : s;
  const value = <V>(v: V): V =>
    redactValue(v, redactors, { maxChars: REDACT_MAX_CHARS, budget: REDACT_ACTIONS_BUDGET }) as V;
  return {
    ...t,
    ...(t.segment === undefined ? {} : { segment: text(t.segment) }),
    ...(Array.isArray(t.verdicts)
      ? { verdicts: t.verdicts.map((v) => (v && typeof v === 'object' ? { ...v, grader: text(v.grader) } : v)) }
      : {}),
    ...(t.actions === undefined ? {} : { actions: value(t.actions) }),
    ...(t.user_signals === undefined ? {} : { user_signals: value(t.user_signals) }),
    ...(t.error_kind ? { error_kind: text(t.error_kind) } : {}),
    ...(Array.isArray(t.tags) ? { tags: t.tags.map(text) } : {}),
  };
};

/** Traces the sampler has redacted already, so the recorder does not do it twice. */
const redacted = new WeakSet<object>();
export const markRedacted = <T extends object>(t: T): T => {
  redacted.add(t);
  return t;
};
export const isRedacted = (t: unknown): boolean => typeof t === 'object' && t !== null && redacted.has(t);

/**
 * A `TraceSampled` input as the SDK or the ingest API gets it: every text redacted (the payload's input and output
 * too), ids checked. What the sampler prepared (`markRedacted`) comes back as it is.
 */
export const redactTraceInput = <
  T extends TraceText & { payload?: { input?: string | undefined; output?: string | undefined } },
>(
  t: T,
  redactors: readonly Redactor[] = DEFAULT_REDACTORS,
): T => {
  if (isRedacted(t) || typeof t !== 'object' || t === null || Array.isArray(t)) return t;
  const out = redactTraceFields(t, redactors);
  const p = t.payload;
  if (!p || typeof p !== 'object') return out;
  const text = (s: unknown) =>
    typeof s === 'string' ? redactText(s.length > REDACT_MAX_CHARS ? s.slice(0, REDACT_MAX_CHARS) : s, redactors) : s;
  return {
    ...out,
    payload: {
      ...p,
      ...(p.input === undefined ? {} : { input: text(p.input) }),
      ...(p.output === undefined ? {} : { output: text(p.output) }),
    },
  };
};
