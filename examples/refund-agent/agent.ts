import { decideRefund } from './refundAgent.ts';

/** The baseline: `passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent.ts --k 3` */
export const meta = {
  version: 'refund-agent-v1',
  model: 'stand-in',
  prompt: 'Decide the refund by the 30-day window, proof of purchase and damage rules.',
};

export default decideRefund({ borderlineWindow: 0.3, partialReceipt: 0.35, borderlineDamage: 0.3, slip: 0.01 });
