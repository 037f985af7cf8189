/**
 * A stand-in refund agent: it decides "approve" or "deny" through three intermediate checks, and each check
 * is noisy where the case is ambiguous (a return window near its limit, a partial receipt, damage near the
 * 90-day cut-off) — the way a real LLM agent flips on hard rows and stays stable on easy ones.
 * All randomness comes from the trial's seed (`seeded`), so a re-run of the same attempt repeats itself. It imports
 * nothing: copied out of the installed package (`cp -r node_modules/passk/examples .`) it runs as it is.
 */
export interface RefundRequest {
  order_id: string;
  days_since_purchase: number;
  receipt: 'yes' | 'partial' | 'no';
  damaged: boolean;
  amount_usd: number;
  category: string;
  note: string;
}

export interface Noise {
  /** Chance of misjudging the return window when within 2 days of the 30-day limit. */
  readonly borderlineWindow: number;
  /** Chance of misjudging a partial receipt. */
  readonly partialReceipt: number;
  /** Chance of misjudging damage near the 90-day limit. */
  readonly borderlineDamage: number;
  /** Chance of any other check slipping, and of the final answer contradicting the checks. */
  readonly slip: number;
}

/**
 * Floats in [0, 1) from a seed: xoshiro128** seeded through splitmix32, the stream of passk's own generator
 * (processors/core/prng.ts), so the example answers as it did when it used that one.
 */
const seeded = (seed: number): (() => number) => {
  let s = seed >>> 0;
  const mix = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    const z = Math.imul(s ^ (s >>> 16), 0x85ebca6b);
    const y = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (y ^ (y >>> 16)) >>> 0;
  };
  let [a, b, c, d] = [mix(), mix(), mix(), mix()];
  const rotl = (x: number, k: number): number => (x << k) | (x >>> (32 - k));
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result / 4294967296;
  };
};

export const decideRefund = (noise: Noise) => async (input: RefundRequest, ctx: { seed: number }) => {
  const random = seeded(ctx.seed);
  const judge = (truth: boolean, pError: number) => (random() < pError ? !truth : truth);
  const days = input.days_since_purchase;
  const returnWindow = judge(days <= 30, Math.abs(days - 30) <= 2 ? noise.borderlineWindow : noise.slip);
  const proof = judge(input.receipt !== 'no', input.receipt === 'partial' ? noise.partialReceipt : noise.slip);
  const damage = judge(
    input.damaged && days <= 90,
    input.damaged && Math.abs(days - 90) <= 10 ? noise.borderlineDamage : noise.slip,
  );
  let approve = proof && (returnWindow || damage);
  if (random() < noise.slip) approve = !approve;
  await new Promise((r) => setTimeout(r, 2 + Math.floor(random() * 10))); // a model call takes a moment
  const inputTokens = 180 + Math.ceil(input.note.length / 4);
  const outputTokens = 30 + Math.floor(random() * 20);
  return {
    output: approve ? 'approve' : 'deny',
    checks: [
      { name: 'return_window', answer: returnWindow },
      { name: 'proof_of_purchase', answer: proof },
      { name: 'damage_criteria', answer: damage },
    ],
    actions: [{ tool: 'lookup_order', arguments: { order_id: input.order_id } }],
    tokens: { input: inputTokens, output: outputTokens },
    cost_usd: Math.round((inputTokens * 2.5e-6 + outputTokens * 1e-5) * 1e8) / 1e8,
  };
};
