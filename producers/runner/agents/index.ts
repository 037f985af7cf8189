import { createCommandAgent } from './commandAgent.ts';
import { createHttpAgent } from './httpAgent.ts';
import { createModuleAgent } from './moduleAgent.ts';
import type { Agent } from './types.ts';

export * from './failures.ts';
export * from './types.ts';
export { createCommandAgent, EXIT_TEMPFAIL } from './commandAgent.ts';
export { createHttpAgent } from './httpAgent.ts';
export { createModuleAgent } from './moduleAgent.ts';

/**
 * An agent from its spec: `http://…` or `https://…` (POST per trial), `cmd:<shell command>` (a process per
 * trial), or a path to a module (`.ts`, `.js`, `.mjs`) whose default export is `(input, ctx) => result`.
 */
export const createAgent = async (
  spec: string,
  opts: { isolation?: 'worker' | 'none'; headers?: Record<string, string> } = {},
): Promise<Agent> => {
  if (/^https?:\/\//i.test(spec))
    return createHttpAgent({ url: spec, ...(opts.headers ? { headers: opts.headers } : {}) });
  const cmd = /^(cmd|command):(.+)$/s.exec(spec);
  if (cmd) return createCommandAgent({ command: cmd[2]!.trim() });
  return createModuleAgent({
    path: spec.replace(/^module:/, ''),
    ...(opts.isolation ? { isolation: opts.isolation } : {}),
  });
};
