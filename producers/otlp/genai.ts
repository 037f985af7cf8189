/**
 * OTLP spans following the OpenTelemetry GenAI semantic conventions → passk production traces (sampler
 * candidates). One trace = the root span of a request (no parent); its child spans are summarized: tool calls
 * (`gen_ai.operation.name = execute_tool`) become actions, and a child model call supplies the input or output
 * messages when the root span has none. Children usually end, and are exported, before their root: those seen
 * before the root arrives are held (bounded) until it does.
 */
import type { TraceCandidate } from '../sampler/sampler.ts';
import type { AnyValue, KeyValue, OtlpRequest, OtlpSpan } from './decode.ts';

type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

export const valueOf = (v: AnyValue | undefined): Value => {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue) return attributesOf(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return v.bytesValue;
  return null;
};

export const attributesOf = (kvs: readonly KeyValue[] | undefined): Record<string, Value> => {
  const out: Record<string, Value> = {};
  for (const kv of kvs ?? []) out[kv.key] = valueOf(kv.value);
  return out;
};

/** A JSON-text attribute (the conventions' `gen_ai.input.messages`, …) parsed; other text kept as it is. */
const parsed = (v: Value | undefined): unknown => {
  if (typeof v !== 'string') return v ?? undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};

const str = (v: Value | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

interface SpanView {
  readonly span: OtlpSpan;
  readonly attrs: Record<string, Value>;
  readonly resource: Record<string, Value>;
}

/** Input and output messages of a span: its attributes, else its events (the conventions' older event form). */
const messagesOf = (s: SpanView): { input?: unknown; output?: unknown } => {
  let input = parsed(s.attrs['gen_ai.input.messages'] ?? s.attrs['gen_ai.prompt']);
  let output = parsed(s.attrs['gen_ai.output.messages'] ?? s.attrs['gen_ai.completion']);
  const inputs: unknown[] = [];
  const outputs: unknown[] = [];
  for (const e of s.span.events ?? []) {
    const a = attributesOf(e.attributes);
    if (a['gen_ai.input.messages'] !== undefined) input ??= parsed(a['gen_ai.input.messages']);
    if (a['gen_ai.output.messages'] !== undefined) output ??= parsed(a['gen_ai.output.messages']);
    if (/^gen_ai\.(system|user|assistant|tool)\.message$/.test(e.name ?? ''))
      inputs.push({ role: e.name!.split('.')[1], content: parsed(a.content ?? a.message) });
    if (e.name === 'gen_ai.choice') outputs.push(parsed(a.message ?? a.content));
  }
  if (input === undefined && inputs.length > 0) input = inputs;
  if (output === undefined && outputs.length > 0) output = outputs.length === 1 ? outputs[0] : outputs;
  return { ...(input === undefined ? {} : { input }), ...(output === undefined ? {} : { output }) };
};

const errorOf = (s: SpanView): string | undefined => {
  const type = str(s.attrs['error.type']);
  if (type) return type;
  const exception = (s.span.events ?? []).find((e) => e.name === 'exception');
  if (exception) return str(attributesOf(exception.attributes)['exception.type']) ?? 'exception';
  // Status code 2 = ERROR.
  return s.span.status?.code === 2 ? s.span.status.message || 'error' : undefined;
};

const nanosToMs = (n: string | undefined): number | undefined =>
  n === undefined || n === '0' ? undefined : Number(BigInt(n) / 1_000_000n);

const isTool = (s: SpanView) => s.attrs['gen_ai.operation.name'] === 'execute_tool';

/** The passk trace of a root span and its children, or why there is none. */
export const traceOf = (
  root: SpanView,
  children: readonly SpanView[],
): { candidate: TraceCandidate } | { reason: string } => {
  const a = root.attrs;
  const isGenAi = Object.keys(a).some((k) => k.startsWith('gen_ai.') || k.startsWith('passk.'));
  if (!isGenAi && !children.some((c) => Object.keys(c.attrs).some((k) => k.startsWith('gen_ai.'))))
    return { reason: `span "${root.span.name}" (${root.span.spanId}) has no gen_ai.* or passk.* attributes` };
  const agentVersion =
    str(a['passk.agent_version']) ?? str(a['gen_ai.agent.version']) ?? str(root.resource['service.version']);
  if (!agentVersion)
    return {
      reason: `span "${root.span.name}" (${root.span.spanId}) names no agent version (passk.agent_version, gen_ai.agent.version or the resource's service.version)`,
    };
  const byStart = [...children].sort((x, y) =>
    Number(BigInt(x.span.startTimeUnixNano ?? '0') - BigInt(y.span.startTimeUnixNano ?? '0')),
  );
  const own = messagesOf(root);
  const models = byStart.filter((c) => !isTool(c)).map(messagesOf);
  const input = own.input ?? models.find((m) => m.input !== undefined)?.input;
  const output = own.output ?? models.findLast((m) => m.output !== undefined)?.output;

  const actions = byStart.filter(isTool).map((c) => {
    const args = parsed(c.attrs['gen_ai.tool.call.arguments']);
    return {
      tool: str(c.attrs['gen_ai.tool.name']) ?? c.span.name,
      ...(args && typeof args === 'object' && !Array.isArray(args)
        ? { arguments: args as Record<string, unknown> }
        : args === undefined
          ? {}
          : { arguments: { value: args } }),
    };
  });

  const verdicts: NonNullable<TraceCandidate['verdicts']> = [];
  const listed = parsed(a['passk.verdicts']);
  if (Array.isArray(listed)) verdicts.push(...(listed as typeof verdicts));
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
  const model =
    str(a['gen_ai.request.model']) ?? byStart.map((c) => str(c.attrs['gen_ai.request.model'])).find(Boolean);
  if (model) tags.add(`model:${model}`);
  const agentId = str(a['gen_ai.agent.id']) ?? str(a['gen_ai.agent.name']);
  if (agentId) tags.add(`agent:${agentId}`);
  const conversation = str(a['gen_ai.conversation.id']);
  if (conversation) tags.add(`conversation:${conversation}`);

  // Tokens: the model calls' usage; the root's own when it reports usage and no child does (no double count).
  const usage = (views: readonly SpanView[]) => {
    let input = 0;
    let output = 0;
    let seen = false;
    for (const v of views) {
      const i = v.attrs['gen_ai.usage.input_tokens'];
      const o = v.attrs['gen_ai.usage.output_tokens'];
      if (typeof i === 'number' && i >= 0) {
        input += Math.round(i);
        seen = true;
      }
      if (typeof o === 'number' && o >= 0) {
        output += Math.round(o);
        seen = true;
      }
    }
    return seen ? { input, output } : undefined;
  };
  const tokens = usage(byStart) ?? usage([root]);
  const error = errorOf(root) ?? byStart.map(errorOf).find(Boolean);
  const at = nanosToMs(root.span.endTimeUnixNano) ?? nanosToMs(root.span.startTimeUnixNano);
  return {
    candidate: {
      trace_id: root.span.traceId,
      agent_version: agentVersion,
      segment: str(a['passk.segment']) ?? 'default',
      input: input ?? null,
      ...(output === undefined ? {} : { output }),
      ...(verdicts.length ? { verdicts } : {}),
      ...(actions.length ? { actions } : {}),
      ...(tokens ? { tokens } : {}),
      ...(Object.keys(signals).length ? { user_signals: signals } : {}),
      ...(error ? { error_kind: error } : {}),
      ...(tags.size ? { tags: [...tags] } : {}),
      ...(at === undefined ? {} : { occurred_at: at }),
    },
  };
};

export interface Assembled {
  readonly candidates: { span: OtlpSpan; candidate: TraceCandidate }[];
  /** A root span that makes no trace, with the children it took along (`spans` counts both). */
  readonly rejected: { span: OtlpSpan; spans: number; reason: string }[];
}

/**
 * Groups the spans of export requests into traces. Child spans wait (at most `maxHeld` traces' worth, oldest
 * dropped first) for their root; a root makes a trace of itself and every child seen so far.
 */
export const createSpanAssembler = (opts: { maxHeld?: number } = {}) => {
  const maxHeld = opts.maxHeld ?? 10_000;
  const held = new Map<string, SpanView[]>();
  return {
    get held() {
      return held.size;
    },
    add(request: OtlpRequest): Assembled {
      const roots: SpanView[] = [];
      for (const rs of request.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? []) {
            const view = { span, attrs: attributesOf(span.attributes), resource };
            if (!span.parentSpanId) roots.push(view);
            else {
              const list = held.get(span.traceId) ?? [];
              list.push(view);
              held.delete(span.traceId);
              held.set(span.traceId, list);
              if (held.size > maxHeld) held.delete(held.keys().next().value!);
            }
          }
      }
      const out: Assembled = { candidates: [], rejected: [] };
      for (const root of roots) {
        const children = (held.get(root.span.traceId) ?? []).filter((c) => c.span.spanId !== root.span.spanId);
        held.delete(root.span.traceId);
        if (!root.span.traceId) {
          out.rejected.push({
            span: root.span,
            spans: 1 + children.length,
            reason: `span "${root.span.name}" has no trace id`,
          });
          continue;
        }
        const r = traceOf(root, children);
        if ('reason' in r) out.rejected.push({ span: root.span, spans: 1 + children.length, reason: r.reason });
        else out.candidates.push({ span: root.span, candidate: r.candidate });
      }
      return out;
    },
  };
};
