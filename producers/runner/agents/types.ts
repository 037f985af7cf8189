import { z } from 'zod';
import { Action, Check } from '../../../schemas/events/trialRecorded.ts';

/** What the runner hands the agent for one trial. A fresh object per trial: nothing is shared between trials. */
export interface TrialRequest {
  readonly row_id: string;
  readonly attempt: number;
  readonly run_id: string;
  /** Unique per trial: a session id for agents that keep state server-side. */
  readonly trial_id: string;
  /** Derived from (run, row, attempt): a seeded agent repeats itself on a re-run of the same attempt. */
  readonly seed: number;
  readonly input: unknown;
  readonly metadata?: Record<string, unknown>;
}

/** What an agent returns: its output and, optionally, what it did on the way and what it cost. */
export const AgentResult = z.object({
  output: z.unknown(),
  checks: z.array(Check).optional(),
  actions: z.array(Action).optional(),
  retrieved_refs: z.array(z.string()).optional(),
  forbidden_actions: z.array(z.string()).optional(),
  cost_usd: z.number().nonnegative().optional(),
  tokens: z.object({ input: z.number().int().nonnegative(), output: z.number().int().nonnegative() }).optional(),
  model: z.string().optional(),
  /** The agent reports it could not do its job. `infra: true` = not its fault (ungraded, retried). */
  error: z
    .object({ kind: z.string().min(1), message: z.string().optional(), infra: z.boolean().optional() })
    .optional(),
});
export type AgentResult = z.infer<typeof AgentResult>;

/** A bare string is an output; anything else must be an AgentResult. */
export const toAgentResult = (value: unknown): AgentResult => {
  if (typeof value === 'string') return { output: value };
  const r = AgentResult.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new AgentProtocolError(
    `the agent returned an invalid result: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`,
  );
};

/** The agent broke the protocol (bad result shape): its fault, graded as a failure. */
export class AgentProtocolError extends Error {
  override name = 'AgentProtocolError';
  readonly kind = 'agent_protocol';
}

/** An agent, however it is reached. `run` must honour the signal; the runner enforces the timeout. */
export interface Agent {
  readonly kind: 'module' | 'http' | 'command';
  /** What identifies the agent's code when no version is given: hashed into the default agent version. */
  readonly fingerprint: string;
  /** What the fingerprint leaves out that one might expect in it (a command's file too large to hash), to say. */
  readonly fingerprintNote?: string;
  /** Version, model and hashes a module agent declares in `export const meta`. */
  readonly meta?: AgentMeta;
  run(request: TrialRequest, opts: { timeoutMs: number }): Promise<AgentResult>;
  close(): Promise<void>;
}

export const AgentMeta = z.object({
  version: z.string().min(1).optional(),
  id: z.string().min(1).optional(),
  model: z.string().optional(),
  prompt: z.string().optional(),
  tools: z.unknown().optional(),
  config: z.unknown().optional(),
});
export type AgentMeta = z.infer<typeof AgentMeta>;
