// The example refund agent, slowed down so a test can kill a run midway.
import refundAgent, { meta } from '../../../examples/refund-agent/agent.ts';
import type { RefundRequest } from '../../../examples/refund-agent/refundAgent.ts';

export { meta };
export default async (input: RefundRequest, ctx: { seed: number }) => {
  await new Promise((r) => setTimeout(r, 150));
  return refundAgent(input, ctx);
};
