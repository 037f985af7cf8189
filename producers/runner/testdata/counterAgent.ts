// Module state: a shared instance would count up across trials; a fresh instance per trial always says 1.
let calls = 0;
export const meta = { version: 'counter-v1', model: 'none' };
export default async (input: string, ctx: { attempt: number; seed: number }) => {
  calls++;
  return { output: `${input}:${calls}`, checks: [{ name: 'attempt', answer: ctx.attempt }] };
};
