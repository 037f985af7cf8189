import { describe, expect, it } from 'vitest';
import type { KeyValue, OtlpRequest, OtlpSpan } from './decode.ts';
import { createSpanAssembler } from './genai.ts';

const kv = (attrs: Record<string, string | number | boolean | string[]>): KeyValue[] =>
  Object.entries(attrs).map(([key, v]) => ({
    key,
    value: Array.isArray(v)
      ? { arrayValue: { values: v.map((s) => ({ stringValue: s })) } }
      : typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: String(v) }
            : { doubleValue: v },
  }));

const request = (spans: OtlpSpan[], resource: Record<string, string> = {}): OtlpRequest => ({
  resourceSpans: [{ resource: { attributes: kv(resource) }, scopeSpans: [{ spans }] }],
});

const T = 'aa'.repeat(16);

describe('GenAI spans → production traces', () => {
  it('reads the older event form, an ERROR status, passk.verdicts, passk.tags and the resource version', () => {
    const a = createSpanAssembler();
    const { candidates, rejected } = a.add(
      request(
        [
          {
            traceId: T,
            spanId: '01'.repeat(8),
            name: 'chat',
            startTimeUnixNano: '1700000000000000000',
            endTimeUnixNano: '1700000000250000000',
            attributes: kv({
              'gen_ai.operation.name': 'chat',
              'passk.verdicts': JSON.stringify([{ grader: 'judge', passed: null, score: 0.4 }]),
              'passk.tags': ['high_risk', 'eu'],
              'passk.user_signal.rating': 1,
            }),
            events: [
              { name: 'gen_ai.user.message', attributes: kv({ content: 'hello' }) },
              { name: 'gen_ai.choice', attributes: kv({ message: '{"role":"assistant","content":"hi"}' }) },
            ],
            status: { code: 2, message: 'upstream 502' },
          },
        ],
        { 'service.version': 'svc-7' },
      ),
      0,
    );
    expect(rejected).toEqual([]);
    expect(candidates[0]!.candidate).toEqual({
      trace_id: T,
      agent_version: 'svc-7',
      segment: 'default',
      input: [{ role: 'user', content: 'hello' }],
      output: { role: 'assistant', content: 'hi' },
      latency_ms: 250,
      verdicts: [{ grader: 'judge', passed: null, score: 0.4 }],
      user_signals: { rating: 1 },
      error_kind: 'upstream 502',
      tags: ['high_risk', 'eu'],
      occurred_at: 1_700_000_000_250,
    });
  });

  it('holds children exported before their root, takes the messages of model calls, defaults the version', () => {
    const a = createSpanAssembler();
    const child = (id: string, trace: string, attrs: Record<string, string>, start: string): OtlpSpan => ({
      traceId: trace,
      spanId: id,
      parentSpanId: 'ff'.repeat(8),
      name: attrs['gen_ai.operation.name'] ?? 'child',
      startTimeUnixNano: start,
      attributes: kv(attrs),
    });
    const first = a.add(
      request([
        child('01'.repeat(8), T, { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': '["q1"]' }, '1'),
        child('02'.repeat(8), T, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' }, '2'),
        child('03'.repeat(8), T, { 'gen_ai.operation.name': 'chat', 'gen_ai.output.messages': '["a2"]' }, '3'),
      ]),
      0,
    );
    expect(first).toEqual({ candidates: [], rejected: [], duplicates: 0 });
    expect(a.held).toBe(1);
    const root: OtlpSpan = {
      traceId: T,
      spanId: 'ff'.repeat(8),
      name: 'invoke_agent',
      attributes: kv({ 'gen_ai.operation.name': 'invoke_agent', 'passk.agent_version': 'v9' }),
    };
    const orphanRoot: OtlpSpan = {
      traceId: 'bb'.repeat(16),
      spanId: '0a'.repeat(8),
      name: 'invoke_agent',
      attributes: kv({ 'gen_ai.operation.name': 'invoke_agent' }),
    };
    const second = a.add(request([root, orphanRoot]), 0);
    expect(second.candidates[0]!.candidate).toMatchObject({
      agent_version: 'v9',
      input: ['q1'],
      output: ['a2'],
      actions: [{ tool: 'search' }],
    });
    // No version anywhere: stored as `unversioned`, never refused for that alone.
    expect(second.rejected).toEqual([]);
    expect(second.candidates[1]!.candidate).toMatchObject({ trace_id: 'bb'.repeat(16), agent_version: 'unversioned' });
    expect(a.held).toBe(0);
  });
});

describe('older GenAI generations', () => {
  it('reads gen_ai.content.prompt / completion events (Spring AI) and the prompt_tokens / completion_tokens names', () => {
    const a = createSpanAssembler();
    const { candidates } = a.add(
      request([
        {
          traceId: T,
          spanId: '07'.repeat(8),
          name: 'chat',
          attributes: kv({
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.usage.prompt_tokens': 12,
            'gen_ai.usage.completion_tokens': 5,
          }),
          events: [
            { name: 'gen_ai.content.prompt', attributes: kv({ 'gen_ai.prompt': 'user: where is my order?' }) },
            { name: 'gen_ai.content.completion', attributes: kv({ 'gen_ai.completion': 'assistant: shipped' }) },
          ],
        },
      ]),
      0,
    );
    expect(candidates[0]!.candidate).toMatchObject({
      input: 'user: where is my order?',
      output: 'assistant: shipped',
      tokens: { input: 12, output: 5 },
      model: 'gpt-4o',
    });
  });

  it('reads the indexed gen_ai.prompt.N / gen_ai.completion.N attributes (OpenLLMetry before v0.2x)', () => {
    const a = createSpanAssembler();
    const { candidates } = a.add(
      request([
        {
          traceId: T,
          spanId: '08'.repeat(8),
          name: 'openai.chat',
          attributes: kv({
            'gen_ai.system': 'OpenAI',
            'gen_ai.prompt.0.role': 'system',
            'gen_ai.prompt.0.content': 'be brief',
            'gen_ai.prompt.1.role': 'user',
            'gen_ai.prompt.1.content': 'refund order 9',
            'gen_ai.completion.0.role': 'assistant',
            'gen_ai.completion.0.content': 'Refunded order 9.',
          }),
        },
      ]),
      0,
    );
    expect(candidates[0]!.candidate).toMatchObject({
      input: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'refund order 9' },
      ],
      output: [{ role: 'assistant', content: 'Refunded order 9.' }],
      agent_version: 'unversioned',
    });
  });
});
