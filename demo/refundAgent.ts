import type { AgentResult, TrialRequest } from '../producers/runner/agents/types.ts';
import { AGENT_ID, AGENT_MODEL, simulateTrial, type AgentVersion } from './agents.ts';
import { DEMO_SEED } from './dataset/demoRow.ts';

/**
 * The simulated refund reviewer as a runner agent (`passk run --agent module:demo/agents/prompt-v1.ts`).
 * Each trial's answers are drawn from (version, request, run, attempt), so a re-run of the same attempt repeats
 * itself and different attempts are independent draws.
 */
export const refundAgent = (version: AgentVersion, seed = DEMO_SEED) => ({
  meta: { id: AGENT_ID, version, model: AGENT_MODEL, prompt: `refund-review ${version}` },
  run: async (input: unknown, ctx: Omit<TrialRequest, 'input'>): Promise<AgentResult> => {
    const text = typeof input === 'string' ? input : JSON.stringify(input);
    const t = simulateTrial(version, text, [ctx.run_id, ctx.attempt], seed);
    return {
      output: t.output,
      checks: t.checks.map(({ name, answer }) => ({ name, answer })),
      actions: t.actions,
      tokens: t.tokens,
      cost_usd: t.costUsd,
      model: AGENT_MODEL,
    };
  },
});
