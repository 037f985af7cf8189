import { refundAgent } from '../refundAgent.ts';

/** The demo's simulated refund reviewer, prompt-v3: `passk run --agent module:demo/agents/prompt-v3.ts`. */
const agent = refundAgent('prompt-v3');
export const meta = agent.meta;
export default agent.run;
