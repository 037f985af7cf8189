import { refundAgent } from '../refundAgent.ts';

/** The demo's simulated refund reviewer, prompt-v1: `passk run --agent module:demo/agents/prompt-v1.ts`. */
const agent = refundAgent('prompt-v1');
export const meta = agent.meta;
export default agent.run;
