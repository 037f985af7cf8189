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
    );
    expect(rejected).toEqual([]);
    expect(candidates[0]!.candidate).toEqual({
      trace_id: T,
      agent_version: 'svc-7',
      segment: 'default',
      input: [{ role: 'user', content: 'hello' }],
      output: { role: 'assistant', content: 'hi' },
      verdicts: [{ grader: 'judge', passed: null, score: 0.4 }],
      user_signals: { rating: 1 },
      error_kind: 'upstream 502',
      tags: ['high_risk', 'eu'],
      occurred_at: 1_700_000_000_250,
    });
  });

  it('holds children exported before their root, takes the messages of model calls, rejects what has no version', () => {
    const a = createSpanAssembler({ maxHeld: 1 });
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
    );
    expect(first).toEqual({ candidates: [], rejected: [] });
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
    const second = a.add(request([root, orphanRoot]));
    expect(second.candidates[0]!.candidate).toMatchObject({
      agent_version: 'v9',
      input: ['q1'],
      output: ['a2'],
      actions: [{ tool: 'search' }],
    });
    expect(second.rejected).toEqual([
      { span: orphanRoot, spans: 1, reason: expect.stringMatching(/names no agent version/) },
    ]);
    expect(a.held).toBe(0);
    // A third trace's children push out the oldest held trace (maxHeld 1).
    a.add(request([child('04'.repeat(8), 'cc'.repeat(16), {}, '1')]));
    a.add(request([child('05'.repeat(8), 'dd'.repeat(16), {}, '1')]));
    expect(a.held).toBe(1);
  });
});
