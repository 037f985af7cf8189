/**
 * OTLP spans (and GenAI log records) → passk production traces (sampler candidates). One trace = one local root
 * and the spans under it. A local root is a span without a parent, a span whose parent is in another process (OTLP
 * span flags 0x300: a W3C `traceparent` from a web app, a gateway, a queue, a parent agent), or the topmost span of
 * a trace whose parent never arrived within `rootWaitMs`. Each span is read by the conventions it follows
 * (conventions.ts); a root's children are summarized: tool calls become actions, model calls supply the input,
 * output, tokens and models the root lacks.
 *
 * Children usually end, and are exported, before their root: they are held until it comes, bounded in bytes
 * (`maxHeldBytes`, oldest trace evicted first, each eviction counted). After a trace is made it is remembered for
 * `lateWindowMs`: a child, a log record or a re-sent root arriving then makes the next revision of the trace (or,
 * when nothing changed, nothing).
 */
import { sha256Text } from '../../schemas/sha256.ts';
import type { TraceCandidate } from '../sampler/sampler.ts';
import {
  attributesOf,
  parsed,
  readSpan,
  str,
  type Reading,
  type SpanEvent,
  type SpanView,
  type Value,
} from './conventions.ts';
import type { AnyValue, KeyValue, OtlpLogRecord, OtlpLogsRequest, OtlpRequest, OtlpSpan } from './decode.ts';
import { pushAll } from '../../processors/core/arrays.ts';

export { attributesOf, valueOf } from './conventions.ts';

const errorOf = (s: SpanView): string | undefined => {
  const type = str(s.attrs['error.type']);
  if (type) return type;
  const exception = s.events.find((e) => e.name === 'exception');
  if (exception) return str(exception.attrs['exception.type']) ?? 'exception';
  // Status code 2 = ERROR.
  return s.span.status?.code === 2 ? s.span.status.message || 'error' : undefined;
};

const nanos = (n: string | undefined): bigint | undefined => (n === undefined || n === '0' ? undefined : BigInt(n));
const nanosToMs = (n: string | undefined): number | undefined => {
  const v = nanos(n);
  return v === undefined ? undefined : Number(v / 1_000_000n);
};

/**
 * The tool calls in a model's output messages, in any convention's shape: OTel GenAI parts (`{type: "tool_call",
 * name, arguments}`), OpenAI's (`{function: {name, arguments}}`), OpenInference's (`{tool_call: {function: …}}`), the
 * Vercel AI SDK's (`{toolName, input}`).
 */
export const toolCallsIn = (output: unknown): { name: string; arguments?: unknown }[] => {
  const out: { name: string; arguments?: unknown }[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 8 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x) => walk(x, depth + 1));
    const o = v as Record<string, unknown>;
    const fn = (o.function ?? (o.tool_call as Record<string, unknown> | undefined)?.function) as
      Record<string, unknown> | undefined;
    const args = (x: unknown) => (typeof x === 'string' ? parsed(x) : x);
    if (o.type === 'tool_call' && typeof o.name === 'string') out.push({ name: o.name, arguments: args(o.arguments) });
    else if (fn && typeof fn.name === 'string') out.push({ name: fn.name, arguments: args(fn.arguments) });
    else if (typeof o.toolName === 'string') out.push({ name: o.toolName, arguments: args(o.input ?? o.args) });
    else for (const x of Object.values(o)) walk(x, depth + 1);
  };
  walk(output, 0);
  return out;
};

/** The version a trace gets when nothing names one (never a reason to refuse it). */
export const UNVERSIONED = 'unversioned';

const hasTraceAttributes = (v: SpanView, r: { conventions: string[] }) =>
  r.conventions.length > 0 || Object.keys(v.attrs).some((k) => k.startsWith('passk.'));

/** The passk trace of a root span and its children, or why there is none. */
export const traceOf = (
  root: SpanView,
  children: readonly SpanView[],
): { candidate: TraceCandidate } | { reason: string } => {
  const a = root.attrs;
  const own = readSpan(root);
  const byStart = [...children].sort((x, y) =>
    Number((nanos(x.span.startTimeUnixNano) ?? 0n) - (nanos(y.span.startTimeUnixNano) ?? 0n)),
  );
  const readings = byStart.map((c) => ({ view: c, r: readSpan(c) }));
  if (!hasTraceAttributes(root, own) && !readings.some(({ view, r }) => hasTraceAttributes(view, r)))
    return {
      reason: `span "${root.span.name}" (${root.span.spanId}) and its children follow no LLM convention (no gen_ai.*, llm.*, openinference.*, traceloop.*, ai.* or passk.* attributes)`,
    };
  const agentVersion =
    str(a['passk.agent_version']) ?? str(a['gen_ai.agent.version']) ?? str(root.resource['service.version']);

  const models = readings.filter(({ r }) => r.modelCall && !r.tool).map(({ r }) => r);
  const all = readings.map(({ r }) => r);
  const notTools = all.filter((r) => !r.tool);
  const pick = <K extends keyof Reading>(k: K, from: readonly Reading[], last = false): Reading[K] | undefined =>
    own[k] ?? (last ? from.findLast((r) => r[k] !== undefined) : from.find((r) => r[k] !== undefined))?.[k];
  // The request's messages: the root's own, else its model calls' (the first's input, the last's output).
  const input = pick('input', models) ?? pick('input', notTools);
  const output = pick('output', models, true) ?? pick('output', notTools, true);

  // Tool spans; else (an instrumentation that makes none) the tool calls in the model calls' outputs.
  const toolSpans = readings.filter(({ r }) => r.tool).map(({ r }) => r.tool!);
  const calls = toolSpans.length ? toolSpans : [own, ...models].flatMap((r) => toolCallsIn(r.output));
  const actions = calls.map((tool) => {
    const args = tool.arguments;
    return {
      tool: tool.name,
      ...(args && typeof args === 'object' && !Array.isArray(args)
        ? { arguments: args as Record<string, unknown> }
        : args === undefined || args === null
          ? {}
          : { arguments: { value: args } }),
    };
  });

  const verdicts: NonNullable<TraceCandidate['verdicts']> = [];
  const listed = parsed(a['passk.verdicts']);
  if (Array.isArray(listed)) pushAll(verdicts, listed as typeof verdicts);
  const signals: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(a)) {
    if (k.startsWith('passk.verdict.') && (typeof v === 'boolean' || v === null))
      verdicts.push({ grader: k.slice('passk.verdict.'.length), passed: v });
    if (
      k.startsWith('passk.user_signal.') &&
      (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
    )
      signals[k.slice('passk.user_signal.'.length)] = v;
  }

  const tags = new Set<string>();
  const listedTags = a['passk.tags'];
  for (const t of Array.isArray(listedTags) ? listedTags : typeof listedTags === 'string' ? [listedTags] : [])
    if (typeof t === 'string' && t !== '') tags.add(t);
  const model = pick('model', all);
  const responseModel = pick('responseModel', all, true);
  if (model) tags.add(`model:${model}`);
  const agentId = str(a['gen_ai.agent.id']) ?? str(a['gen_ai.agent.name']);
  if (agentId) tags.add(`agent:${agentId}`);
  const conversation = str(a['gen_ai.conversation.id']);
  if (conversation) tags.add(`conversation:${conversation}`);
  const workflow = str(a['traceloop.workflow.name']);
  if (workflow) tags.add(`workflow:${workflow}`);

  // Tokens and cost: the model calls' own; the root's when no child reports any (no double count).
  const sum = (k: 'inputTokens' | 'outputTokens' | 'costUsd', from: readonly Reading[]) => {
    const xs = from.map((r) => r[k]).filter((x): x is number => x !== undefined);
    return xs.length ? xs.reduce((p, x) => p + x, 0) : undefined;
  };
  const counted = all.some((r) => r.inputTokens !== undefined || r.outputTokens !== undefined) ? all : [own];
  const inTokens = sum('inputTokens', counted);
  const outTokens = sum('outputTokens', counted);
  const cost = sum('costUsd', all.some((r) => r.costUsd !== undefined) ? all : [own]);
  const error = errorOf(root) ?? byStart.map(errorOf).find(Boolean);
  const at = nanosToMs(root.span.endTimeUnixNano) ?? nanosToMs(root.span.startTimeUnixNano);
  const start = nanos(root.span.startTimeUnixNano);
  const end = nanos(root.span.endTimeUnixNano);
  const latency = start !== undefined && end !== undefined && end >= start ? Number(end - start) / 1e6 : undefined;
  const userId = pick('userId', all);
  const sessionId = pick('sessionId', all);
  return {
    candidate: {
      trace_id: root.span.traceId,
      agent_version: agentVersion ?? UNVERSIONED,
      segment: str(a['passk.segment']) ?? 'default',
      input,
      ...(output === undefined ? {} : { output }),
      ...(verdicts.length ? { verdicts } : {}),
      ...(actions.length ? { actions } : {}),
      ...(inTokens !== undefined || outTokens !== undefined
        ? { tokens: { input: Math.round(inTokens ?? 0), output: Math.round(outTokens ?? 0) } }
        : {}),
      ...(Object.keys(signals).length ? { user_signals: signals } : {}),
      ...(error ? { error_kind: error } : {}),
      ...(tags.size ? { tags: [...tags] } : {}),
      ...(at === undefined ? {} : { occurred_at: at }),
      ...(userId ? { user_id: userId } : {}),
      ...(sessionId ? { session_id: sessionId } : {}),
      ...(latency === undefined ? {} : { latency_ms: Math.round(latency * 1000) / 1000 }),
      ...(model ? { model } : {}),
      ...(responseModel ? { response_model: responseModel } : {}),
      ...(cost === undefined ? {} : { cost_usd: cost }),
    },
  };
};

/** What a trace's made candidate was, remembered for its late window (the receiver notes its sampling decision). */
export interface RecordedTrace {
  readonly traceId: string;
  root: SpanView;
  readonly children: SpanView[];
  bytes: number;
  until: number;
  revision: number;
  key: string;
  /** Set by the receiver: the probability it was kept with, `out`, or `pending` (in a capped window's reservoir). */
  decision?: number | 'out' | 'pending';
}

/** A span or log record that makes no trace, as it came (with its resource's attributes): a dead letter's bytes. */
export type Refused =
  | { readonly span: OtlpSpan; readonly resource?: readonly KeyValue[] }
  | { readonly logRecord: OtlpLogRecord; readonly resource?: readonly KeyValue[] };

/** The spans of `views` as refused items. */
export const refusedOf = (views: readonly SpanView[]): Refused[] =>
  views.map((v) => ({ span: v.span, ...(v.resourceAttributes ? { resource: v.resourceAttributes } : {}) }));

export interface Assembled {
  /** `revision` 0 for a new trace; a recorded trace's next revision otherwise (`recorded` is its memory). */
  readonly candidates: { candidate: TraceCandidate; revision: number; recorded: RecordedTrace }[];
  /** A root span that makes no trace, with the children it took along (`spans` counts both; `refused` holds them). */
  readonly rejected: { span?: OtlpSpan; spans: number; reason: string; refused: readonly Refused[] }[];
  /** A re-sent root or child that changed nothing: counted, not recorded again. */
  duplicates: number;
}

export interface AssemblerStats {
  heldBytes: number;
  heldTraces: number;
  recordedTraces: number;
  /** Traces whose held spans were evicted to keep the byte bound; their spans. */
  evictedTraces: number;
  evictedSpans: number;
}

export interface AssemblerOptions {
  /** Bytes of spans held: children waiting for their root, and recorded traces within their late window. @default 64 MiB */
  readonly maxHeldBytes?: number;
  /** A trace's spans whose root never came become a trace of their topmost span after this long. @default 30 s */
  readonly rootWaitMs?: number;
  /** How long a recorded trace takes late children, log records and re-sent roots as a new revision. @default 60 s */
  readonly lateWindowMs?: number;
  /** Evictions, reported as they happen (the receiver logs, counts and dead-letters them: `refused`). */
  readonly onEvict?: (traceId: string, spans: number, reason: string, refused: readonly Refused[]) => void;
}

interface Held {
  readonly views: SpanView[];
  /** Log records of spans not seen yet: span id → events. */
  readonly pending: Map<string, SpanEvent[]>;
  bytes: number;
  readonly since: number;
}

const valueBytes = (v: Value): number => {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + valueBytes(x) + 8, 0);
  if (v && typeof v === 'object') return Object.entries(v).reduce((n, [k, x]) => n + k.length + valueBytes(x) + 8, 0);
  return 8;
};
const attrBytes = (a: Record<string, Value>) =>
  Object.entries(a).reduce((n, [k, v]) => n + k.length + valueBytes(v) + 16, 0);
/** The held size of a span: its attributes', events' and names' text, and a fixed overhead. */
const viewBytes = (v: SpanView) =>
  200 + v.span.name.length + attrBytes(v.attrs) + v.events.reduce((n, e) => n + e.name.length + attrBytes(e.attrs), 0);

/** Span flags: whether the parent's remoteness is known (0x100) and whether the parent is remote (0x200). */
const PARENT_REMOTE = 0x300;
export const isLocalRoot = (s: OtlpSpan): boolean =>
  !s.parentSpanId || ((s.flags ?? 0) & PARENT_REMOTE) === PARENT_REMOTE;

const keyOf = (c: TraceCandidate) => sha256Text(JSON.stringify(c), 'base64url');

/** Groups the spans of export requests into traces (see the file comment). */
export const createSpanAssembler = (opts: AssemblerOptions = {}) => {
  const maxBytes = opts.maxHeldBytes ?? 64 * 1024 * 1024;
  const rootWaitMs = opts.rootWaitMs ?? 30_000;
  const lateWindowMs = opts.lateWindowMs ?? 60_000;
  const held = new Map<string, Held>();
  const recorded = new Map<string, RecordedTrace>();
  /** Trace ids recorded and out of their window: a span of one arriving later is refused as late. */
  const done = new Set<string>();
  const stats: AssemblerStats = { heldBytes: 0, heldTraces: 0, recordedTraces: 0, evictedTraces: 0, evictedSpans: 0 };

  const forgetDone = () => {
    while (done.size > 200_000) done.delete(done.values().next().value!);
  };
  const dropRecorded = (r: RecordedTrace) => {
    recorded.delete(r.traceId);
    stats.heldBytes -= r.bytes;
    done.add(r.traceId);
    forgetDone();
  };
  /** Keeps the byte bound: recorded traces (past their first record) go first, then the oldest held. */
  const bound = () => {
    for (const r of recorded.values()) {
      if (stats.heldBytes <= maxBytes) break;
      dropRecorded(r);
    }
    for (const [id, h] of held) {
      if (stats.heldBytes <= maxBytes) break;
      held.delete(id);
      stats.heldBytes -= h.bytes;
      stats.evictedTraces++;
      stats.evictedSpans += h.views.length;
      opts.onEvict?.(
        id,
        h.views.length,
        `held spans over the ${maxBytes}-byte bound (maxHeldBytes)`,
        refusedOf(h.views),
      );
    }
    stats.heldTraces = held.size;
    stats.recordedTraces = recorded.size;
  };

  const heldOf = (traceId: string, now: number): Held => {
    let h = held.get(traceId);
    if (!h) held.set(traceId, (h = { views: [], pending: new Map(), bytes: 0, since: now }));
    return h;
  };

  /** A trace made of `root` and `children`: a candidate (revision 0 or the next), a rejection, or a duplicate. */
  const make = (root: SpanView, children: SpanView[], now: number, out: Assembled): void => {
    const before = recorded.get(root.span.traceId);
    const r = traceOf(root, children);
    if ('reason' in r) {
      if (before) dropRecorded(before);
      out.rejected.push({
        span: root.span,
        spans: 1 + children.length,
        reason: r.reason,
        refused: refusedOf([root, ...children]),
      });
      return;
    }
    const key = keyOf(r.candidate);
    const bytes = viewBytes(root) + children.reduce((n, c) => n + viewBytes(c), 0);
    if (before) {
      stats.heldBytes += bytes - before.bytes;
      before.root = root;
      const next = children.slice(); // children may be before.children itself
      before.children.length = 0;
      pushAll(before.children, next);
      before.bytes = bytes;
      if (before.key === key) {
        out.duplicates++;
        return;
      }
      before.key = key;
      before.revision++;
      out.candidates.push({ candidate: r.candidate, revision: before.revision, recorded: before });
      return;
    }
    const rec: RecordedTrace = {
      traceId: root.span.traceId,
      root,
      children,
      bytes,
      until: now + lateWindowMs,
      revision: 0,
      key,
    };
    recorded.set(rec.traceId, rec);
    stats.heldBytes += bytes;
    out.candidates.push({ candidate: r.candidate, revision: 0, recorded: rec });
  };

  const viewOf = (span: OtlpSpan, resource: Record<string, Value>, resourceAttributes?: KeyValue[]): SpanView => ({
    span,
    attrs: attributesOf(span.attributes),
    resource,
    ...(resourceAttributes ? { resourceAttributes } : {}),
    events: (span.events ?? []).map((e) => ({ name: e.name ?? '', attrs: attributesOf(e.attributes) })),
  });

  const lateReason = (traceId: string) =>
    `a span of trace ${traceId} arrived after the trace was recorded and its late window (${lateWindowMs} ms) closed`;

  return {
    stats,
    /** Adds the spans of one export request; `now` is the receiver's clock (for the waits and windows). */
    add(request: OtlpRequest, now: number): Assembled {
      const out: Assembled = { candidates: [], rejected: [], duplicates: 0 };
      const roots: SpanView[] = [];
      const touched = new Set<RecordedTrace>();
      for (const rs of request.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        const resourceAttributes = rs.resource?.attributes;
        const as = (span: OtlpSpan): Refused[] => [
          { span, ...(resourceAttributes ? { resource: resourceAttributes } : {}) },
        ];
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? []) {
            if (!span.traceId) {
              out.rejected.push({ span, spans: 1, reason: `span "${span.name}" has no trace id`, refused: as(span) });
              continue;
            }
            const view = viewOf(span, resource, resourceAttributes);
            if (isLocalRoot(span)) {
              roots.push(view);
              continue;
            }
            const rec = recorded.get(span.traceId);
            if (rec) {
              const i = rec.children.findIndex((c) => c.span.spanId === span.spanId);
              if (i >= 0) rec.children[i] = view;
              else rec.children.push(view);
              touched.add(rec);
              continue;
            }
            if (done.has(span.traceId)) {
              out.rejected.push({ span, spans: 1, reason: lateReason(span.traceId), refused: as(span) });
              continue;
            }
            const h = heldOf(span.traceId, now);
            const waiting = h.pending.get(span.spanId);
            if (waiting) {
              pushAll(view.events, waiting);
              h.pending.delete(span.spanId);
            }
            const size = viewBytes(view);
            h.views.push(view);
            h.bytes += size;
            stats.heldBytes += size;
          }
      }
      for (const root of roots) {
        const traceId = root.span.traceId;
        const h = held.get(traceId);
        const rec = recorded.get(traceId);
        let children: SpanView[] = [];
        if (h) {
          held.delete(traceId);
          stats.heldBytes -= h.bytes;
          const waiting = h.pending.get(root.span.spanId);
          if (waiting) pushAll(root.events, waiting);
          children = h.views;
        }
        if (rec) {
          touched.delete(rec);
          // A re-sent root, or the real root of a trace first made of its topmost span: the spans known so far stay.
          const others = [rec.root, ...rec.children].filter((c) => c.span.spanId !== root.span.spanId);
          children = [...others, ...children.filter((c) => !others.some((o) => o.span.spanId === c.span.spanId))];
        } else if (done.has(traceId)) {
          out.rejected.push({
            span: root.span,
            spans: 1 + children.length,
            reason: lateReason(traceId),
            refused: refusedOf([root, ...children]),
          });
          continue;
        }
        make(
          root,
          children.filter((c) => c.span.spanId !== root.span.spanId),
          now,
          out,
        );
      }
      for (const rec of touched) make(rec.root, rec.children, now, out);
      bound();
      return out;
    },

    /** Joins GenAI log records to their spans (by trace and span id), as span events. */
    addLogs(request: OtlpLogsRequest, now: number): Assembled & { ignored: number } {
      const out = { candidates: [], rejected: [], duplicates: 0, ignored: 0 } as Assembled & { ignored: number };
      const touched = new Set<RecordedTrace>();
      for (const rl of request.resourceLogs ?? [])
        for (const sl of rl.scopeLogs ?? [])
          for (const record of sl.logRecords ?? []) {
            const refused: Refused[] = [
              { logRecord: record, ...(rl.resource?.attributes ? { resource: rl.resource.attributes } : {}) },
            ];
            const attrs = attributesOf(record.attributes);
            const name = record.eventName || str(attrs['event.name']) || '';
            if (!name.startsWith('gen_ai.')) {
              out.ignored++;
              continue;
            }
            if (!record.traceId || !record.spanId) {
              out.rejected.push({ spans: 1, reason: `log record "${name}" names no trace and span id`, refused });
              continue;
            }
            const body = record.body === undefined ? null : attributesOfBody(record.body);
            const event: SpanEvent = { name, attrs: { ...attrs, ...body } };
            const rec = recorded.get(record.traceId);
            if (rec) {
              const view = [rec.root, ...rec.children].find((v) => v.span.spanId === record.spanId);
              if (view) {
                view.events.push(event);
                touched.add(rec);
                continue;
              }
            }
            if (done.has(record.traceId)) {
              out.rejected.push({ spans: 1, reason: lateReason(record.traceId), refused });
              continue;
            }
            const h = rec ? undefined : heldOf(record.traceId, now);
            const view = h?.views.find((v) => v.span.spanId === record.spanId);
            const size = 64 + name.length + attrBytes(event.attrs);
            if (view) view.events.push(event);
            else if (h) {
              const list = h.pending.get(record.spanId) ?? [];
              list.push(event);
              h.pending.set(record.spanId, list);
            } else {
              // The trace is recorded but this span is not part of it yet: keep the event with the recorded trace.
              rec!.children.push({
                span: { traceId: record.traceId, spanId: record.spanId, parentSpanId: rec!.root.span.spanId, name },
                attrs: {},
                resource: {},
                events: [event],
              });
              touched.add(rec!);
            }
            if (h) h.bytes += size;
            stats.heldBytes += size;
          }
      for (const rec of touched) make(rec.root, rec.children, now, out);
      bound();
      return out;
    },

    /**
     * The clock's work: traces whose root never came within `rootWaitMs` are made of their topmost span, and
     * recorded traces past their late window are forgotten.
     */
    tick(now: number): Assembled {
      const out: Assembled = { candidates: [], rejected: [], duplicates: 0 };
      for (const [id, h] of held) {
        if (h.since + rootWaitMs > now) continue;
        held.delete(id);
        stats.heldBytes -= h.bytes;
        if (h.views.length === 0) continue;
        const ids = new Set(h.views.map((v) => v.span.spanId));
        const tops = h.views
          .filter((v) => !ids.has(v.span.parentSpanId ?? ''))
          .sort((x, y) => Number((nanos(x.span.startTimeUnixNano) ?? 0n) - (nanos(y.span.startTimeUnixNano) ?? 0n)));
        const root = tops[0] ?? h.views[0]!;
        make(
          root,
          h.views.filter((v) => v !== root),
          now,
          out,
        );
      }
      for (const r of recorded.values()) if (r.until <= now) dropRecorded(r);
      stats.heldTraces = held.size;
      stats.recordedTraces = recorded.size;
      return out;
    },

    get held() {
      return held.size;
    },

    /** The spans of a trace made and still remembered (within its late window), as refused items; else undefined. */
    spansOf(traceId: string): Refused[] | undefined {
      const r = recorded.get(traceId);
      return r ? refusedOf([r.root, ...r.children]) : undefined;
    },
  };
};

/** A log record's body: a map's fields as attributes (`content`, `message`, `tool_calls`, …); else `content`. */
const attributesOfBody = (body: AnyValue): Record<string, Value> => {
  if (body.kvlistValue) return attributesOf(body.kvlistValue.values);
  return { content: attributesOf([{ key: 'content', value: body }]).content ?? null };
};

export type SpanAssembler = ReturnType<typeof createSpanAssembler>;
export type { SpanView } from './conventions.ts';
