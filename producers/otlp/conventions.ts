/**
 * What each common LLM instrumentation convention puts on a span, read into one shape (a `Reading`). One mapping
 * table per convention (docs/ingest.md prints them): the OpenTelemetry GenAI semantic conventions in all their
 * generations (span attributes, span events, and the GenAI events the official instrumentations emit as OTLP log
 * records, joined here as span events), OpenInference (Arize Phoenix), OpenLLMetry (Traceloop) and the Vercel AI
 * SDK. Each convention's reader is tested against spans made by that convention's own library
 * (test/ingest/conventions.int.test.ts).
 */
import type { AnyValue, KeyValue, OtlpSpan } from './decode.ts';

export type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

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

/** A span event, or a GenAI log record joined to its span (its body's fields become attributes). */
export interface SpanEvent {
  readonly name: string;
  readonly attrs: Record<string, Value>;
}

export interface SpanView {
  readonly span: OtlpSpan;
  readonly attrs: Record<string, Value>;
  readonly resource: Record<string, Value>;
  /** The resource's attributes as they came (a dead letter's bytes). */
  readonly resourceAttributes?: readonly KeyValue[];
  readonly events: SpanEvent[];
}

/** What one span says about its request, by whichever convention it follows. */
export interface Reading {
  input?: unknown;
  output?: unknown;
  inputTokens?: number;
  outputTokens?: number;
  model?: string;
  responseModel?: string;
  userId?: string;
  sessionId?: string;
  costUsd?: number;
  /** A tool call: its name and arguments. */
  tool?: { name: string; arguments?: unknown };
  /** A call of a model (its input and output are a model's messages). */
  modelCall?: boolean;
}

export interface Convention {
  readonly name: string;
  /** passk trace field → where it is read from (docs/ingest.md). */
  readonly table: readonly (readonly [string, string])[];
  readonly read: (s: SpanView) => Reading;
}

/** A JSON-text attribute parsed; other text kept as it is. */
export const parsed = (v: Value | undefined): unknown => {
  if (typeof v !== 'string') return v ?? undefined;
  const t = v.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[') && !t.startsWith('"')) return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};

export const str = (v: Value | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

const num = (v: Value | undefined): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

const first = <T>(...xs: (T | undefined)[]): T | undefined => xs.find((x) => x !== undefined);

/**
 * Attributes flattened with indices (`llm.input_messages.0.message.role`, `gen_ai.prompt.1.content`) back into an
 * array of objects, in index order; undefined when there is none.
 */
export const indexed = (attrs: Record<string, Value>, prefix: string): Record<string, unknown>[] | undefined => {
  const items = new Map<number, Record<string, unknown>>();
  const p = `${prefix}.`;
  for (const [key, v] of Object.entries(attrs)) {
    if (!key.startsWith(p)) continue;
    const path = key.slice(p.length).split('.');
    const i = Number(path[0]);
    if (!Number.isInteger(i) || i < 0 || path.length < 2) continue;
    let node = items.get(i) ?? {};
    items.set(i, node);
    for (let j = 1; j < path.length - 1; j++) {
      const k = path[j]!;
      const nextIsIndex = /^\d+$/.test(path[j + 1]!);
      node[k] ??= nextIsIndex ? [] : {};
      node = node[k] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = parsed(v);
  }
  if (items.size === 0) return undefined;
  const compact = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.filter((y) => y !== undefined).map(compact)
      : x && typeof x === 'object'
        ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, compact(y)]))
        : x;
  return [...items.entries()].sort(([a], [b]) => a - b).map(([, v]) => compact(v) as Record<string, unknown>);
};

const MESSAGE_EVENT = /^gen_ai\.(system|user|assistant|tool)\.message$/;

/** An event's message: its content, plus tool calls when it has them. */
const messageOf = (role: string | undefined, a: Record<string, Value>): unknown => {
  const content = parsed(a.content ?? a['gen_ai.event.content'] ?? a.message);
  const calls = a.tool_calls;
  if (calls === undefined) return role ? { role, content } : content;
  return { ...(role ? { role } : {}), ...(content === undefined ? {} : { content }), tool_calls: calls };
};

/** OpenTelemetry GenAI semantic conventions, every generation (v1.26 to v1.38 and the older `gen_ai.prompt.N`). */
export const otelGenAi: Convention = {
  name: 'OpenTelemetry GenAI',
  table: [
    [
      'input',
      '`gen_ai.input.messages` (span attribute or event attribute); `gen_ai.prompt`; `gen_ai.prompt.N.role/content`; events and OTLP log records `gen_ai.{system,user,assistant,tool}.message`; event `gen_ai.content.prompt` (`gen_ai.prompt`)',
    ],
    [
      'output',
      '`gen_ai.output.messages`; `gen_ai.completion`; `gen_ai.completion.N.*`; event or log record `gen_ai.choice`; event `gen_ai.content.completion` (`gen_ai.completion`)',
    ],
    [
      'tokens',
      '`gen_ai.usage.input_tokens` / `output_tokens`, or the older `gen_ai.usage.prompt_tokens` / `completion_tokens`',
    ],
    ['model / response_model', '`gen_ai.request.model` / `gen_ai.response.model`'],
    ['user_id / session_id', '`user.id` (or `enduser.id`) / `session.id` (or `gen_ai.conversation.id`)'],
    ['actions', 'spans with `gen_ai.operation.name = execute_tool`: `gen_ai.tool.name`, `gen_ai.tool.call.arguments`'],
  ],
  read: (s) => {
    const a = s.attrs;
    let input = parsed(first(a['gen_ai.input.messages'], a['gen_ai.prompt']));
    let output = parsed(first(a['gen_ai.output.messages'], a['gen_ai.completion']));
    input ??= indexed(a, 'gen_ai.prompt');
    output ??= indexed(a, 'gen_ai.completion');
    const inputs: unknown[] = [];
    const outputs: unknown[] = [];
    for (const e of s.events) {
      const ea = e.attrs;
      if (ea['gen_ai.input.messages'] !== undefined) input ??= parsed(ea['gen_ai.input.messages']);
      if (ea['gen_ai.output.messages'] !== undefined) output ??= parsed(ea['gen_ai.output.messages']);
      const m = MESSAGE_EVENT.exec(e.name);
      if (m) inputs.push(messageOf(m[1], ea));
      else if (e.name === 'gen_ai.choice') outputs.push(messageOf(undefined, ea));
      else if (e.name === 'gen_ai.content.prompt') input ??= parsed(ea['gen_ai.prompt']);
      else if (e.name === 'gen_ai.content.completion') output ??= parsed(ea['gen_ai.completion']);
    }
    if (input === undefined && inputs.length > 0) input = inputs;
    if (output === undefined && outputs.length > 0) output = outputs.length === 1 ? outputs[0] : outputs;
    const op = str(a['gen_ai.operation.name']);
    const toolName = str(a['gen_ai.tool.name']);
    const inputTokens = num(first(a['gen_ai.usage.input_tokens'], a['gen_ai.usage.prompt_tokens']));
    const outputTokens = num(first(a['gen_ai.usage.output_tokens'], a['gen_ai.usage.completion_tokens']));
    const model = str(a['gen_ai.request.model']);
    return {
      input,
      output,
      inputTokens,
      outputTokens,
      model,
      responseModel: str(a['gen_ai.response.model']),
      userId: str(first(a['user.id'], a['enduser.id'])),
      sessionId: str(first(a['session.id'], a['gen_ai.conversation.id'])),
      ...(op === 'execute_tool'
        ? { tool: { name: toolName ?? s.span.name, arguments: parsed(a['gen_ai.tool.call.arguments']) } }
        : {}),
      modelCall:
        op === 'chat' ||
        op === 'text_completion' ||
        op === 'generate_content' ||
        (op !== 'execute_tool' && op !== 'invoke_agent' && (model !== undefined || inputTokens !== undefined)),
    };
  },
};

/** OpenInference (Arize Phoenix's convention): `openinference.span.kind`, `input.value`, `llm.*`. */
export const openInference: Convention = {
  name: 'OpenInference',
  table: [
    [
      'input',
      '`llm.input_messages.N.message.*` on an LLM span, else `input.value` (JSON text parsed when `input.mime_type` is JSON)',
    ],
    ['output', '`llm.output_messages.N.message.*` on an LLM span, else `output.value`'],
    ['tokens', '`llm.token_count.prompt` / `llm.token_count.completion`'],
    ['model / response_model', '`llm.invocation_parameters.model` / `llm.model_name`'],
    ['user_id / session_id', '`user.id` / `session.id`'],
    ['cost_usd', '`llm.cost.total`'],
    ['actions', '`TOOL` spans: `tool.name`, `tool.parameters` (else `input.value`)'],
  ],
  read: (s) => {
    const a = s.attrs;
    const kind = str(a['openinference.span.kind'])?.toUpperCase();
    const value = (k: string) =>
      str(a[`${k}.mime_type`]) === 'text/plain' ? str(a[`${k}.value`]) : parsed(a[`${k}.value`]);
    const messages = (k: string) => indexed(a, k)?.map((m) => (m.message ?? m) as unknown);
    const llm = kind === 'LLM';
    const invocation = parsed(a['llm.invocation_parameters']);
    const requested =
      invocation && typeof invocation === 'object' && !Array.isArray(invocation)
        ? str((invocation as Record<string, Value>).model)
        : undefined;
    return {
      input: llm ? (messages('llm.input_messages') ?? value('input')) : value('input'),
      output: llm ? (messages('llm.output_messages') ?? value('output')) : value('output'),
      inputTokens: num(a['llm.token_count.prompt']),
      outputTokens: num(a['llm.token_count.completion']),
      model: requested ?? str(a['llm.model_name']),
      responseModel: str(a['llm.model_name']),
      userId: str(a['user.id']),
      sessionId: str(a['session.id']),
      costUsd: num(a['llm.cost.total']),
      ...(kind === 'TOOL'
        ? {
            tool: {
              name: str(a['tool.name']) ?? s.span.name,
              arguments: parsed(a['tool.parameters']) ?? value('input'),
            },
          }
        : {}),
      modelCall: llm,
    };
  },
};

const EMPTY_CALL = /^\{\s*"args"\s*:\s*\[\s*\]\s*,\s*"kwargs"\s*:\s*\{\s*\}\s*\}$/;

/** OpenLLMetry (Traceloop): `traceloop.*` entities, association properties; its model spans use the GenAI names. */
export const openLlmetry: Convention = {
  name: 'OpenLLMetry',
  table: [
    ['input / output', '`traceloop.entity.input` / `traceloop.entity.output` (workflow, task, agent and tool spans)'],
    [
      'user_id / session_id',
      '`traceloop.association.properties.user_id` (or `userId`) / `…session_id` (or `sessionId`, `conversation_id`)',
    ],
    ['tags', '`workflow:<traceloop.workflow.name>`'],
    ['actions', 'spans with `traceloop.span.kind = tool`: `traceloop.entity.name`, `traceloop.entity.input`'],
    [
      '(model calls)',
      'the OpenTelemetry GenAI table, including the older `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`',
    ],
  ],
  read: (s) => {
    const a = s.attrs;
    const prop = (...names: string[]) => first(...names.map((n) => str(a[`traceloop.association.properties.${n}`])));
    const entity = (k: 'input' | 'output') => {
      const v = str(a[`traceloop.entity.${k}`]);
      if (v === undefined || EMPTY_CALL.test(v)) return undefined;
      const x = parsed(v) as { args?: unknown[]; kwargs?: object } | undefined;
      // A call's arguments as the SDK records them, `{"args": [...], "kwargs": {...}}`: one object argument is
      // recorded as kwargs, one positional argument as args[0].
      const call = x && typeof x === 'object' && Array.isArray(x.args) ? x : undefined;
      if (!call) return x;
      const kwargs = Object.keys(call.kwargs ?? {}).length;
      if (call.args!.length === 0 && kwargs) return call.kwargs;
      if (call.args!.length === 1 && !kwargs) return call.args![0];
      return x;
    };
    return {
      input: entity('input'),
      output: entity('output'),
      userId: prop('user_id', 'userId', 'user'),
      sessionId: prop('session_id', 'sessionId', 'conversation_id', 'thread_id'),
      ...(str(a['traceloop.span.kind']) === 'tool'
        ? { tool: { name: str(a['traceloop.entity.name']) ?? s.span.name, arguments: entity('input') } }
        : {}),
    };
  },
};

/** The Vercel AI SDK's telemetry (`experimental_telemetry`): `ai.*`. */
export const vercelAi: Convention = {
  name: 'Vercel AI SDK',
  table: [
    ['input', '`ai.prompt.messages` (model calls), else `ai.prompt` (`{system, prompt}` or `{messages}`)'],
    ['output', '`ai.response.text`, else `ai.response.object`, else `ai.response.toolCalls`'],
    ['tokens', '`ai.usage.inputTokens` / `outputTokens` (or `promptTokens` / `completionTokens`)'],
    ['model / response_model', '`ai.model.id` / `ai.response.model`'],
    [
      'user_id / session_id',
      '`ai.telemetry.metadata.userId` (or `user_id`, `user.id`) / `…sessionId` (or `session_id`, `session.id`)',
    ],
    ['actions', '`ai.toolCall` spans: `ai.toolCall.name`, `ai.toolCall.args` (or `.input`)'],
  ],
  read: (s) => {
    const a = s.attrs;
    const op = str(a['ai.operationId']) ?? '';
    const meta = (...names: string[]) => first(...names.map((n) => str(a[`ai.telemetry.metadata.${n}`])));
    return {
      input: parsed(first(a['ai.prompt.messages'], a['ai.prompt'])),
      output: first(str(a['ai.response.text']), parsed(a['ai.response.object']), parsed(a['ai.response.toolCalls'])),
      inputTokens: num(first(a['ai.usage.inputTokens'], a['ai.usage.promptTokens'])),
      outputTokens: num(first(a['ai.usage.outputTokens'], a['ai.usage.completionTokens'])),
      model: str(a['ai.model.id']),
      responseModel: str(a['ai.response.model']),
      userId: meta('userId', 'user_id', 'user.id'),
      sessionId: meta('sessionId', 'session_id', 'session.id'),
      ...(op === 'ai.toolCall'
        ? {
            tool: {
              name: str(a['ai.toolCall.name']) ?? s.span.name,
              arguments: parsed(first(a['ai.toolCall.args'], a['ai.toolCall.input'])),
            },
          }
        : {}),
      modelCall: /\.do(Generate|Stream)$/.test(op),
    };
  },
};

/** Attributes every convention shares (OpenTelemetry's general ones), read on any span. */
export const general: Convention = {
  name: 'OpenTelemetry general',
  table: [['user_id / session_id', '`user.id` (or `enduser.id`) / `session.id`, on any span']],
  read: (s) => ({
    userId: str(first(s.attrs['user.id'], s.attrs['enduser.id'])),
    sessionId: str(s.attrs['session.id']),
  }),
};

/** Which conventions a span follows, by its attribute names (a span may follow several). */
export const conventionsOf = (s: SpanView): Convention[] => {
  const out: Convention[] = [];
  let genai = s.events.some((e) => e.name.startsWith('gen_ai.'));
  let oi = false;
  let tl = false;
  let ai = false;
  for (const k of Object.keys(s.attrs)) {
    if (k.startsWith('gen_ai.')) genai = true;
    else if (k.startsWith('llm.') || k === 'openinference.span.kind' || k === 'input.value' || k === 'output.value')
      oi = true;
    else if (k.startsWith('traceloop.')) tl = true;
    else if (k.startsWith('ai.')) ai = true;
  }
  // The Vercel AI SDK also writes a few gen_ai.* names; its own ai.* are fuller, so they are read first.
  if (ai) out.push(vercelAi);
  if (oi) out.push(openInference);
  if (tl) out.push(openLlmetry);
  if (genai) out.push(otelGenAi);
  return out;
};

/** The readers applied to a span: its conventions, then the general attributes. */
const readersOf = (s: SpanView): Convention[] => [...conventionsOf(s), general];

export const CONVENTIONS: readonly Convention[] = [otelGenAi, openInference, openLlmetry, vercelAi];

/** A span's reading: its conventions' readings merged, the first convention that has a field giving it. */
export const readSpan = (s: SpanView): Reading & { conventions: string[] } => {
  const conventions = conventionsOf(s);
  const out: Reading & { conventions: string[] } = { conventions: conventions.map((c) => c.name) };
  for (const c of readersOf(s)) {
    const r = c.read(s);
    for (const [k, v] of Object.entries(r) as [keyof Reading, unknown][])
      if (v !== undefined && (out[k] === undefined || (k === 'modelCall' && v === true)))
        (out as unknown as Record<string, unknown>)[k] = v;
  }
  return out;
};
