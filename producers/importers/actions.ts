/** Tool calls in the OpenAI/litellm message shape, as the benchmarks log them. */
export interface ActionOut {
  tool: string;
  arguments?: Record<string, unknown>;
}

const parseArgs = (a: unknown): Record<string, unknown> | undefined => {
  if (a && typeof a === 'object' && !Array.isArray(a)) return a as Record<string, unknown>;
  if (typeof a !== 'string' || a.trim() === '') return undefined;
  try {
    const v: unknown = JSON.parse(a);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { raw: a };
  }
};

/** The agent's tool calls in order, from `{function: {name, arguments}}` or `{name, arguments}` entries. */
export const actionsOf = (messages: readonly unknown[] | undefined, role = 'assistant'): ActionOut[] => {
  const out: ActionOut[] = [];
  for (const m of messages ?? []) {
    const msg = m as { role?: string; tool_calls?: unknown };
    if (msg.role !== role || !Array.isArray(msg.tool_calls)) continue;
    for (const call of msg.tool_calls as {
      function?: { name?: string; arguments?: unknown };
      name?: string;
      arguments?: unknown;
    }[]) {
      const name = call.function?.name ?? call.name;
      if (!name) continue;
      const args = parseArgs(call.function?.arguments ?? call.arguments);
      out.push(args ? { tool: name, arguments: args } : { tool: name });
    }
  }
  return out;
};

/** The text of the last message from `role` that has any. */
export const lastText = (messages: readonly unknown[] | undefined, role = 'assistant'): string | undefined => {
  for (const m of [...(messages ?? [])].reverse()) {
    const msg = m as { role?: string; content?: unknown };
    if (msg.role === role && typeof msg.content === 'string' && msg.content.trim() !== '') return msg.content;
  }
  return undefined;
};
