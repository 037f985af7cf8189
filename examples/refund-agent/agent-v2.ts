import { decideRefund } from './refundAgent.ts';

/** A candidate: a prompt that reads receipts more carefully, but judges the return window less reliably. */
export const meta = {
  version: 'refund-agent-v2',
  model: 'stand-in',
  prompt: 'Decide the refund. Accept any proof of purchase; count days carefully.',
};

export default decideRefund({ borderlineWindow: 0.45, partialReceipt: 0.1, borderlineDamage: 0.3, slip: 0.01 });
