import { randomBytes } from 'node:crypto';
import { sha256Text } from '../../schemas/sha256.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { createRng } from '../../processors/core/prng.ts';
import { clip } from '../importers/common.ts';
import type { TraceInput } from '../sdk/inputs.ts';
import type { Recorder } from '../sdk/recorder.ts';
import { inputFingerprint, policyHash } from './fingerprint.ts';
import { alwaysKeepReason, rateOf, SamplingPolicy, type SamplingPolicyInput } from './policy.ts';
import { DEFAULT_REDACTORS, patternRedactor, redactText, redactValue } from '../redaction/redact.ts';
import type { Redactor } from '../redaction/text.ts';
import { checkIdentity, markRedacted, REDACT_MAX_CHARS, redactTraceFields } from '../redaction/trace.ts';
import { KEY_SEP } from '../../schemas/topics.ts';
import type { TraceSpool } from './spool.ts';

/** A production request as the app sees it, before sampling and redaction. */
export interface TraceCandidate {
  readonly trace_id: string;
  readonly agent_version: string;
  /** @default 'default' */
  readonly segment?: string;
  /** Missing (an instrumentation that recorded no content): fingerprinted per trace, never as one shared value. */
  readonly input?: unknown;
  readonly output?: unknown;
  readonly verdicts?: TraceInput['verdicts'];
  /** The tool calls it made; arguments are redacted like the input. */
  readonly actions?: TraceInput['actions'];
  readonly tokens?: TraceInput['tokens'];
  readonly user_signals?: Record<string, string | number | boolean>;
  readonly error_kind?: string | null;
  readonly tags?: string[];
  /** Event time, epoch ms. @default the sampler's clock */
  readonly occurred_at?: number;
  /** The end user and the session (redacted like any text). */
  readonly user_id?: string;
  readonly session_id?: string;
  readonly latency_ms?: number;
  readonly model?: string;
  readonly response_model?: string;
  readonly cost_usd?: number;
  /**
   * Set by the OTLP receiver: the trace's revision (0 first). The event id then also hangs on the redacted content,
   * so two different records of one trace never share an id.
   */
  readonly revision?: number;
}

export interface SamplerOptions {
  readonly policy: SamplingPolicyInput;
  /** Kept traces go here, redacted. */
  readonly recorder: Pick<Recorder, 'recordTrace' | 'flush'>;
  /**
   * Run over every string of a kept trace before it is recorded (strings clipped first), then the policy's own
   * `redact` patterns. @default DEFAULT_REDACTORS
   */
  readonly redactors?: readonly Redactor[];
  /** Seeds the sampling draws, for reproducible tests. @default a random seed */
  readonly seed?: number;
  readonly clock?: () => number;
  /**
   * Keeps a capped policy's windows durable (their counts and reservoirs): written by `persist()`, reloaded here.
   * Without one, a window lives in memory until it closes.
   */
  readonly spool?: TraceSpool;
}

export type Decision =
  | { readonly kept: true; readonly probability: number; readonly reason: string }
  | { readonly kept: false; readonly reason: 'rate' }
  /** Held in the window's reservoir: kept or not when the window closes. */
  | { readonly kept: 'pending'; readonly reason: 'cap' };

export interface SegmentStats {
  seen: number;
  kept: number;
  alwaysKept: number;
}

interface Window {
  readonly end: number;
  readonly rate: number;
  /** The trace ids counted (a re-sent trace is counted once). */
  readonly seen: Set<string>;
  readonly reservoir: Omit<TraceInput, 'sampling'>[];
}

export interface TraceSampler {
  /** Decides at once (or, under a cap, when the window closes). Nothing leaves the process unredacted. */
  offer(trace: TraceCandidate): Decision;
  /** Records a later revision of a trace already kept, with the probability it was kept with (no new draw). */
  record(trace: TraceCandidate, probability: number): void;
  /** Replaces a trace held in a capped window's reservoir by a later revision; false when it is not held. */
  revise(trace: TraceCandidate): boolean;
  /** Closes the windows that ended by now (the clock), emitting their reservoirs. */
  tick(): void;
  /**
   * Makes what was recorded durable (the recorder's flush), then the windows' changes (the spool): call before an
   * answer that acknowledges the traces offered.
   */
  persist(): Promise<void>;
  /** Closes every window (emitting the reservoirs) and flushes the recorder. */
  flush(): Promise<void>;
  readonly stats: ReadonlyMap<string, SegmentStats>;
  readonly policyId: string;
  /** The redactors every kept trace goes through (the default or given ones, then the policy's own patterns). */
  readonly redactors: readonly Redactor[];
}

/**
 * How long past its end a closed window's counted trace ids are kept: longer than an OTLP exporter retries one export
 * (the SDKs' defaults give up within a few minutes), so a re-sent trace is recognized, not counted a second time.
 */
export const CLOSED_KEPT_MS = 15 * 60_000;

export const createTraceSampler = (opts: SamplerOptions): TraceSampler => {
  const policy = SamplingPolicy.parse(opts.policy);
  const policyId = `${policy.name}@${policyHash(policy)}`;
  const redactors = [
    ...(opts.redactors ?? DEFAULT_REDACTORS),
    ...Object.entries(policy.redact ?? {}).map(([name, source]) => patternRedactor(name, new RegExp(source))),
  ];
  const random = createRng(opts.seed ?? randomBytes(4).readUInt32BE(0)).next;
  const clock = opts.clock ?? Date.now;
  const stats = new Map<string, SegmentStats>();
  const windows = new Map<string, Window>();
  const spool = opts.spool;
  for (const w of spool?.load() ?? [])
    windows.set(w.key, { end: w.end, rate: w.rate, seen: new Set(w.seen), reservoir: [...w.reservoir] });
  /**
   * Closed windows' counted trace ids, for `CLOSED_KEPT_MS` past their end: a trace sent again after its window
   * closed (its first answer lost to a client's timeout or a kill) was counted there, and is not counted again in a
   * window of the same key opened for late candidates (that would add its weight twice).
   */
  const closedSeen = new Map<string, { end: number; seen: Set<string> }>();
  for (const w of spool?.loadClosed() ?? []) closedSeen.set(w.key, { end: w.end, seen: new Set(w.seen) });

  const statsOf = (segment: string): SegmentStats => {
    let s = stats.get(segment);
    if (!s) stats.set(segment, (s = { seen: 0, kept: 0, alwaysKept: 0 }));
    return s;
  };

  /** Redaction happens here, before a trace is buffered or recorded. */
  const prepare = (t: TraceCandidate, segment: string, at: number): Omit<TraceInput, 'sampling'> => {
    // clipped before redaction: the work is bounded whatever a request carries (a stored text is at most 8,000
    // characters of the value's JSON: no more of its strings need redacting)
    const bounds = { maxChars: REDACT_MAX_CHARS, budget: REDACT_MAX_CHARS };
    const missing = t.input === undefined || t.input === null;
    const input = missing ? undefined : redactValue(t.input, redactors, bounds);
    const output = t.output === undefined ? undefined : redactValue(t.output, redactors, bounds);
    const text = (v: unknown) => clip(typeof v === 'string' ? v : JSON.stringify(v));
    const identity = (v: string | undefined) => (v === undefined ? undefined : redactText(v.slice(0, 512), redactors));
    const user = identity(t.user_id);
    const session = identity(t.session_id);
    const fields = redactTraceFields(
      {
        trace_id: t.trace_id,
        agent_version: t.agent_version,
        ...(t.verdicts ? { verdicts: t.verdicts } : {}),
        ...(t.actions ? { actions: t.actions } : {}),
        ...(t.user_signals ? { user_signals: t.user_signals } : {}),
        ...(t.error_kind ? { error_kind: t.error_kind } : {}),
        ...(t.tags ? { tags: t.tags } : {}),
      },
      redactors,
    );
    const prepared: Omit<TraceInput, 'sampling'> = {
      trace_id: t.trace_id,
      agent_version: t.agent_version,
      segment,
      // No input: a fingerprint of its own, so unrelated requests never look like one repeated input.
      input_fingerprint: missing ? inputFingerprint({ missing_input_of_trace: t.trace_id }) : inputFingerprint(input),
      occurred_at: at,
      payload: {
        ...(input !== undefined ? { input: text(input) } : {}),
        ...(output !== undefined ? { output: text(output) } : {}),
      },
      ...(fields.verdicts ? { verdicts: [...fields.verdicts] } : {}),
      ...(fields.actions ? { actions: fields.actions as TraceInput['actions'] } : {}),
      ...(t.tokens ? { tokens: t.tokens } : {}),
      ...(fields.user_signals ? { user_signals: fields.user_signals } : {}),
      ...(fields.error_kind ? { error_kind: fields.error_kind } : {}),
      ...(fields.tags ? { tags: [...fields.tags] } : {}),
      ...(user ? { user_id: user } : {}),
      ...(session ? { session_id: session } : {}),
      ...(t.latency_ms === undefined ? {} : { latency_ms: t.latency_ms }),
      ...(t.model ? { model: t.model.slice(0, 512) } : {}),
      ...(t.response_model ? { response_model: t.response_model.slice(0, 512) } : {}),
      ...(t.cost_usd === undefined ? {} : { cost_usd: t.cost_usd }),
      ...(t.revision === undefined ? {} : { revision: t.revision }),
    };
    // without a time of its own the trace is dated when received, but its id stays the one time zero gave
    // it: the same trace sampled again is a duplicate, not a second trace
    if (t.revision === undefined)
      return t.occurred_at === undefined
        ? { ...prepared, event_id: deterministicEventId(0, 'TraceSampled', t.trace_id) }
        : prepared;
    const content = sha256Text(JSON.stringify(prepared), 'hex').slice(0, 16);
    return { ...prepared, event_id: deterministicEventId(at, 'TraceSampled', t.trace_id, t.revision, content) };
  };

  const emit = (trace: Omit<TraceInput, 'sampling'>, probability: number): void => {
    statsOf(trace.segment).kept++;
    void opts.recorder.recordTrace(markRedacted({ ...trace, sampling: { policy: policyId, probability } }));
  };

  const close = (key: string, w: Window): void => {
    windows.delete(key);
    const p = w.rate * Math.min(1, policy.cap!.max / w.seen.size);
    for (const t of w.reservoir) emit(t, p);
    spool?.closed(key);
    const before = closedSeen.get(key);
    if (before) for (const id of w.seen) before.seen.add(id);
    else closedSeen.set(key, { end: w.end, seen: w.seen });
  };
  const closeBefore = (at: number): void => {
    for (const [key, w] of windows) if (w.end <= at) close(key, w);
  };
  const forgetBefore = (at: number): void => {
    for (const [key, c] of closedSeen)
      if (c.end + CLOSED_KEPT_MS <= at) {
        closedSeen.delete(key);
        spool?.forget(key);
      }
  };

  return {
    policyId,
    redactors,
    stats,
    offer(t) {
      // ids are checked and the segment redacted before anything else: the stats and reports name segments
      checkIdentity('trace_id', t.trace_id, redactors);
      checkIdentity('agent_version', t.agent_version, redactors);
      const segment = t.segment === undefined ? 'default' : redactText(t.segment.slice(0, 512), redactors);
      const at = t.occurred_at ?? clock();
      const s = statsOf(segment);
      s.seen++;
      if (policy.cap) closeBefore(at);
      const always = alwaysKeepReason(policy, { segment, ...t });
      if (always) {
        s.alwaysKept++;
        emit(prepare(t, segment, at), 1);
        return { kept: true, probability: 1, reason: `always_keep:${always}` };
      }
      const rate = rateOf(policy, segment);
      if (rate <= 0 || random() >= rate) return { kept: false, reason: 'rate' };
      if (!policy.cap) {
        emit(prepare(t, segment, at), rate);
        return { kept: true, probability: rate, reason: 'rate' };
      }
      const start = Math.floor(at / policy.cap.windowMs) * policy.cap.windowMs;
      const key = `${segment}${KEY_SEP}${start}`;
      let w = windows.get(key);
      if (!w) windows.set(key, (w = { end: start + policy.cap.windowMs, rate, seen: new Set(), reservoir: [] }));
      if (w.seen.has(t.trace_id) || closedSeen.get(key)?.seen.has(t.trace_id))
        return { kept: 'pending', reason: 'cap' };
      w.seen.add(t.trace_id);
      spool?.counted(key, w, t.trace_id);
      const slot = w.reservoir.length < policy.cap.max ? w.reservoir.length : Math.floor(random() * w.seen.size);
      if (slot < policy.cap.max) {
        w.reservoir[slot] = prepare(t, segment, at);
        spool?.slot(key, slot, w.reservoir[slot]!);
      }
      return { kept: 'pending', reason: 'cap' };
    },
    record(t, probability) {
      const segment = t.segment ?? 'default';
      emit(prepare(t, segment, t.occurred_at ?? clock()), probability);
    },
    revise(t) {
      const segment = t.segment ?? 'default';
      for (const [key, w] of windows) {
        const i = w.reservoir.findIndex((r) => r.trace_id === t.trace_id && r.segment === segment);
        if (i >= 0) {
          w.reservoir[i] = prepare(t, segment, t.occurred_at ?? clock());
          spool?.slot(key, i, w.reservoir[i]!);
          return true;
        }
      }
      return false;
    },
    tick() {
      const now = clock();
      closeBefore(now);
      forgetBefore(now);
    },
    async persist() {
      await opts.recorder.flush();
      spool?.commit();
    },
    async flush() {
      for (const [key, w] of [...windows]) close(key, w);
      await opts.recorder.flush();
      spool?.commit();
    },
  };
};
