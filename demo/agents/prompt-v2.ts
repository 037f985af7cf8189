import { refundAgent } from '../refundAgent.ts';

/** The demo's simulated refund reviewer, prompt-v2: `passk run --agent module:demo/agents/prompt-v2.ts`. */
const agent = refundAgent('prompt-v2');
export const meta = agent.meta;
export default agent.run;
