import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONVENTIONS, indexed } from './conventions.ts';
import { toolCallsIn } from './genai.ts';

describe('the conventions', () => {
  it('are documented, table by table, exactly as the code reads them (docs/ingest.md)', () => {
    const doc = readFileSync(new URL('../../docs/ingest.md', import.meta.url), 'utf8');
    for (const c of CONVENTIONS)
      for (const [field, from] of c.table) expect(doc, c.name).toContain(`| ${field} | ${from} |`);
  });

  it('unflattens indexed attributes in index order, nested paths and arrays included', () => {
    expect(
      indexed(
        {
          'llm.input_messages.1.message.role': 'assistant',
          'llm.input_messages.1.message.tool_calls.0.tool_call.function.name': 'lookup',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'hi',
          'llm.model_name': 'x',
        },
        'llm.input_messages',
      ),
    ).toEqual([
      { message: { role: 'user', content: 'hi' } },
      { message: { role: 'assistant', tool_calls: [{ tool_call: { function: { name: 'lookup' } } }] } },
    ]);
    expect(indexed({ 'gen_ai.prompt': 'x' }, 'gen_ai.prompt')).toBeUndefined();
  });

  it("finds tool calls in every convention's output shape", () => {
    expect(
      toolCallsIn([
        { role: 'assistant', parts: [{ type: 'tool_call', name: 'a', arguments: { x: 1 } }] },
        { message: { tool_calls: [{ function: { name: 'b', arguments: '{"y":2}' } }] } },
        { message: { tool_calls: [{ tool_call: { function: { name: 'c', arguments: '{}' } } }] } },
        { toolName: 'd', input: '{"z":3}' },
      ]),
    ).toEqual([
      { name: 'a', arguments: { x: 1 } },
      { name: 'b', arguments: { y: 2 } },
      { name: 'c', arguments: {} },
      { name: 'd', arguments: { z: 3 } },
    ]);
  });
});
