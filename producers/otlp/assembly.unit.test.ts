import { describe, expect, it } from 'vitest';
import type { KeyValue, OtlpLogsRequest, OtlpRequest, OtlpSpan } from './decode.ts';
import { createSpanAssembler } from './genai.ts';

const kv = (attrs: Record<string, string | number>): KeyValue[] =>
  Object.entries(attrs).map(([key, v]) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : { intValue: String(v) },
  }));
const request = (...spans: OtlpSpan[]): OtlpRequest => ({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
const T = (n: number) => n.toString(16).padStart(32, '0');
const S = (n: number) => n.toString(16).padStart(16, '0');
const span = (
  trace: number,
  id: number,
  parent: number | undefined,
  attrs: Record<string, string | number>,
  more: Partial<OtlpSpan> = {},
): OtlpSpan => ({
  traceId: T(trace),
  spanId: S(id),
  ...(parent === undefined ? {} : { parentSpanId: S(parent) }),
  name: String(attrs['gen_ai.operation.name'] ?? 'span'),
  startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(id) * 1_000_000n),
  endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(id + 100) * 1_000_000n),
  attributes: kv(attrs),
  ...more,
});
const chat = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' };
const tool = (name: string) => ({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name });

describe('span assembly: roots, holding, late spans', () => {
  it('makes a span whose parent is in another process (flags 0x300) a root at once', () => {
    const a = createSpanAssembler();
    const out = a.add(request(span(1, 2, 1, chat, { flags: 0x301 })), 0);
    expect(out.candidates.map((c) => c.candidate.trace_id)).toEqual([T(1)]);
    // Without the flag the same span waits for its parent …
    const b = createSpanAssembler({ rootWaitMs: 5_000 });
    expect(b.add(request(span(1, 2, 1, chat, { flags: 0x101 })), 0).candidates).toEqual([]);
    expect(b.tick(4_999).candidates).toEqual([]);
    // … at most rootWaitMs: then its topmost span is the root.
    const late = b.tick(5_000);
    expect(late.candidates.map((c) => [c.candidate.trace_id, c.candidate.tags])).toEqual([[T(1), ['model:gpt-4o']]]);
    expect(b.held).toBe(0);
  });

  it('bounds held spans in bytes, evicting the oldest trace and counting it', () => {
    const evicted: string[] = [];
    const a = createSpanAssembler({ maxHeldBytes: 1_000_000, onEvict: (id) => evicted.push(id) });
    const prompt = 'x'.repeat(300_000);
    for (let t = 1; t <= 5; t++) a.add(request(span(t, 10 + t, 1, { ...chat, 'gen_ai.input.messages': prompt })), 0);
    expect(a.stats.heldBytes).toBeLessThanOrEqual(1_000_000);
    expect(evicted).toEqual([T(1), T(2)]);
    expect(a.stats).toMatchObject({ evictedTraces: 2, evictedSpans: 2 });
    expect(a.held).toBe(3);
  });

  it('makes a child exported after its root the next revision; after the late window it is refused as late', () => {
    const a = createSpanAssembler({ lateWindowMs: 60_000 });
    const first = a.add(request(span(7, 1, undefined, { ...chat, 'gen_ai.input.messages': '["q"]' })), 0);
    expect(first.candidates.map((c) => c.revision)).toEqual([0]);
    const late = a.add(request(span(7, 2, 1, tool('refund'))), 10_000);
    expect(late.candidates.map((c) => [c.revision, c.candidate.actions])).toEqual([[1, [{ tool: 'refund' }]]]);
    a.tick(60_000);
    const after = a.add(request(span(7, 3, 1, tool('mail'))), 61_000);
    expect(after.candidates).toEqual([]);
    expect(after.rejected).toEqual([
      {
        span: expect.anything(),
        spans: 1,
        reason: expect.stringMatching(/late window/),
        refused: [{ span: expect.anything() }],
      },
    ]);
  });

  it('recognizes a re-sent root: the same trace, nothing new recorded', () => {
    const a = createSpanAssembler();
    a.add(request(span(8, 2, 1, tool('lookup'))), 0);
    const root = span(8, 1, undefined, { ...chat, 'gen_ai.input.messages': '["q"]' });
    expect(a.add(request(root), 1).candidates[0]!.candidate.actions).toEqual([{ tool: 'lookup' }]);
    const again = a.add(request(root), 2);
    expect(again).toEqual({ candidates: [], rejected: [], duplicates: 1 });
  });

  it('joins GenAI log records to their span, before or after the span arrives', () => {
    const a = createSpanAssembler();
    const log = (trace: number, id: number, event: string, body: Record<string, string>): OtlpLogsRequest => ({
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                {
                  traceId: T(trace),
                  spanId: S(id),
                  attributes: kv({ 'event.name': event }),
                  body: { kvlistValue: { values: kv(body) } },
                },
              ],
            },
          ],
        },
      ],
    });
    // Before: held with the trace, read when the span comes.
    expect(a.addLogs(log(9, 1, 'gen_ai.user.message', { content: 'hello' }), 0).candidates).toEqual([]);
    const made = a.add(request(span(9, 1, undefined, chat)), 0);
    expect(made.candidates[0]!.candidate.input).toEqual([{ role: 'user', content: 'hello' }]);
    // After: the next revision, with the output.
    const after = a.addLogs(log(9, 1, 'gen_ai.choice', { message: 'hi there' }), 1);
    expect(after.candidates.map((c) => [c.revision, c.candidate.output])).toEqual([[1, 'hi there']]);
    // A record that is not a GenAI event is ignored; one joined to no span is refused.
    expect(a.addLogs(log(9, 1, 'http.request', { content: 'x' }), 2)).toMatchObject({ ignored: 1, candidates: [] });
  });
});
