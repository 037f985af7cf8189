import { createHash } from 'node:crypto';
import { BASELINE, contentKey, errorRate, FIXED, simulateTrial, type AgentVersion } from './agents.ts';
import { DEMO_SEED } from './dataset/demoRow.ts';
import { MUST_NOT_BREAK_MIN_USD, randomOrder } from './dataset/generate.ts';
import { CHECKS, decide, parseRequest, policyChecks, type Order } from './refundPolicy.ts';
import { pick, rngFor, type Rng } from './rng.ts';

/**
 * Simulated production traffic for the agent version that is live. The demo hands every request to the SDK's trace
 * sampler with `SAMPLING_POLICY`: every high-value request is kept (probability 1), a quarter of the rest. Customers whose refund was denied
 * often ask again with the same request ("if asking again can change the answer, people learn to ask again"),
 * so repeated identical inputs appear, and a request the agent is unsure about can get a different answer the
 * second time: a flip on a repeated input.
 * Late in the day a burst of ambiguous claims (crushed boxes after a storm) pulls the pass rate down.
 *
 * One request is planted: a high-value claim for an opened item with only cosmetic wear that the live version
 * approves every time, though the policy denies it. Its audit flags it; a reviewer confirms it, and it becomes a
 * must-not-break row.
 */
export const SEGMENTS = { standard: 0.25, high_value: 1 } as const;
export type Segment = keyof typeof SEGMENTS;
/** The policy the demo hands the SDK's trace sampler (producers/sampler): stratified by segment. */
export const SAMPLING_POLICY = { name: 'refund-stratified', rate: 0.25, segments: { ...SEGMENTS } };

export interface ProductionRequest {
  readonly trace_id: string;
  readonly agent_version: AgentVersion;
  readonly at: number;
  readonly segment: Segment;
  readonly input: string;
  readonly expected: 'approve' | 'deny';
  readonly output: 'approve' | 'deny';
  /** A repeat of an input this customer already sent. */
  readonly resubmitted: boolean;
}

const HOUR = 3_600_000;
const inputOf = (order: Order, message: string): string => JSON.stringify({ message, order });

const requestMessage = (o: Order): string =>
  `Refund request: ${o.item.toLowerCase()}, $${o.price_usd.toFixed(2)}, delivered ${o.days_since_delivery} days ago (${o.condition.replaceAll('_', ' ')}; proof: ${o.proof.replaceAll('_', ' ')}).`;

/** The planted failure: the live version approves it on every attempt; the policy and the fix deny it. */
export const findPlantedFailure = (
  seed = DEMO_SEED,
  live: AgentVersion = BASELINE,
  fix: AgentVersion = FIXED,
): string => {
  const rng = rngFor(seed, 'planted-production-failure');
  for (let i = 0; i < 10_000; i++) {
    const order: Order = {
      item: pick(rng, ['Laptop', 'Camera lens', '4K monitor', 'Espresso machine'] as const),
      price_usd: 899 + Math.floor(rng() * 900),
      days_since_delivery: 4 + Math.floor(rng() * 20),
      proof: 'receipt',
      condition: 'cosmetic_wear',
    };
    const input = inputOf(order, requestMessage(order));
    const key = contentKey(input);
    const wrongEveryTime = errorRate(live, order, 'damage_criteria', key, seed) === 1;
    const fixed = CHECKS.every((c) => errorRate(fix, order, c, key, seed) === 0);
    if (wrongEveryTime && fixed) return input;
  }
  throw new Error('no planted production failure found for this seed');
};

const segmentOf = (o: Order): Segment => (o.price_usd >= MUST_NOT_BREAK_MIN_USD ? 'high_value' : 'standard');

const stormOrder = (rng: Rng): Order => ({
  ...randomOrder(rng),
  condition: 'damaged_packaging_only',
  proof: 'receipt',
  days_since_delivery: 2 + Math.floor(rng() * 10),
});

/** A day of traffic for `version`, starting at `startMs`: about `perHour` requests an hour. */
export const simulateProduction = (opts: {
  version?: AgentVersion;
  startMs: number;
  hours?: number;
  perHour?: number;
  seed?: number;
}): ProductionRequest[] => {
  const { version = BASELINE, startMs, hours = 24, perHour = 30, seed = DEMO_SEED } = opts;
  const rng = rngFor(seed, 'production', version);
  const planted = findPlantedFailure(seed);
  const out: ProductionRequest[] = [];
  const resubmissions = new Map<number, string[]>();
  let n = 0;
  const emit = (input: string, at: number, resubmitted: boolean): void => {
    const { order } = parseRequest(input);
    const trace_id = `tr-${version}-${createHash('sha256').update(`${seed}:${version}:${n++}`).digest('hex').slice(0, 12)}`;
    const output = simulateTrial(version, input, ['production', trace_id], seed).output;
    const segment = segmentOf(order);
    const expected = decide(policyChecks(order));
    out.push({ trace_id, agent_version: version, at, segment, input, expected, output, resubmitted });
    // A denied customer often asks again within a few hours, with the same request.
    if (output === 'deny' && rng() < 0.4) {
      const hour = Math.floor((at - startMs) / HOUR) + 1 + Math.floor(rng() * 3);
      resubmissions.set(hour, [...(resubmissions.get(hour) ?? []), input]);
    }
  };
  for (let h = 0; h < hours; h++) {
    const storm = h >= hours - 6;
    const again = resubmissions.get(h) ?? [];
    for (const [i, input] of again.entries())
      emit(input, startMs + h * HOUR + Math.floor(((i + 0.5) / again.length) * HOUR), true);
    for (let i = 0; i < perHour; i++) {
      const at = startMs + h * HOUR + Math.floor(((i + rng()) / perHour) * HOUR);
      const order = storm && rng() < 0.7 ? stormOrder(rng) : randomOrder(rng);
      emit(inputOf(order, requestMessage(order)), at, false);
    }
    if (h === Math.floor(hours / 2)) emit(planted, startMs + h * HOUR + HOUR / 2, false);
  }
  return out.sort((a, b) => a.at - b.at);
};
