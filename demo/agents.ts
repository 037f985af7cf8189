import { createHash } from 'node:crypto';
import {
  CHECKS,
  decide,
  hardChecks,
  parseRequest,
  policyChecks,
  type CheckName,
  type Decision,
  type Order,
} from './refundPolicy.ts';
import { rngFor } from './rng.ts';
import { DEMO_SEED } from './dataset/demoRow.ts';

/**
 * Simulated refund-review agents, seeded and stochastic per row, the way real agents behave.
 *
 * Each (version, request, check) has a fixed error rate: 0 (always right), 1 (always wrong, so the row is
 * stable-wrong or its verdict survives by luck) or in between (the check flips from attempt to attempt).
 * Only genuinely ambiguous checks (`hardChecks`) get a non-zero rate, so flips concentrate on hard rows.
 * Each attempt then draws its answers independently; the verdict follows from the three answers.
 *
 * - prompt-v1, the baseline: on an ambiguous check, right 50%, always wrong 15%, flaky 35% (error 0.2–0.6).
 * - prompt-v2, the candidate: a clearer damage rubric fixes 80% of the baseline's damage-check errors and "count
 *   the window from the delivery date" half of its return-window errors, but a looser "accept any reasonable
 *   evidence of purchase" instruction counts a shopping-cart screenshot as proof.
 * - prompt-v3, the fix: prompt-v2 with the proof-of-purchase instruction restored.
 */
export const BASELINE = 'prompt-v1';
export const CANDIDATE = 'prompt-v2';
export const FIXED = 'prompt-v3';
export const AGENT_VERSIONS = [BASELINE, CANDIDATE, FIXED] as const;
export type AgentVersion = (typeof AGENT_VERSIONS)[number];
export const AGENT_ID = 'refund-reviewer';
export const AGENT_MODEL = 'sim-refund-1';

/** A stable key for a request's content, so the same input behaves the same in the eval and in production. */
export const contentKey = (input: string): string => createHash('sha256').update(input).digest('hex').slice(0, 16);

const baselineRate = (order: Order, check: CheckName, key: string, seed: number): number => {
  if (!hardChecks(order).has(check)) return 0;
  const r = rngFor(seed, 'latent', key, check);
  const u = r();
  if (u < 0.5) return 0;
  if (u < 0.65) return 1;
  return 0.2 + 0.4 * r();
};

/** The chance that `version` answers `check` wrongly on this request. */
export const errorRate = (
  version: AgentVersion,
  order: Order,
  check: CheckName,
  key: string,
  seed = DEMO_SEED,
): number => {
  const base = baselineRate(order, check, key, seed);
  if (version === BASELINE) return base;
  if (check === 'damage_criteria' && base > 0) return rngFor(seed, 'clearer-damage-rubric', key)() < 0.8 ? 0 : base;
  if (check === 'return_window' && base > 0) return rngFor(seed, 'window-from-delivery', key)() < 0.5 ? 0 : base;
  if (check === 'proof_of_purchase' && version === CANDIDATE && order.proof === 'cart_screenshot') return 1;
  return base;
};

export interface SimulatedTrial {
  readonly output: Decision;
  readonly checks: { name: CheckName; answer: boolean; passed: boolean }[];
  readonly actions: { tool: string; arguments: Record<string, unknown> }[];
  readonly failureCategory: 'bad_arguments' | 'retrieval_miss' | 'unsupported_claim' | 'policy_violation' | null;
  readonly latencyMs: number;
  readonly tokens: { input: number; output: number };
  readonly costUsd: number;
}

const FAILURE_OF: Record<
  CheckName,
  [whenWronglyTrue: SimulatedTrial['failureCategory'], whenWronglyFalse: SimulatedTrial['failureCategory']]
> = {
  return_window: ['bad_arguments', 'bad_arguments'],
  proof_of_purchase: ['unsupported_claim', 'retrieval_miss'],
  damage_criteria: ['policy_violation', 'policy_violation'],
};

/**
 * One attempt of `version` on a request. `draw` names the attempt (e.g. run id and attempt number, or a trace id):
 * the same names always give the same answers, and different names are independent draws.
 */
export const simulateTrial = (
  version: AgentVersion,
  input: string,
  draw: readonly (string | number)[],
  seed = DEMO_SEED,
): SimulatedTrial => {
  const { order } = parseRequest(input);
  const key = contentKey(input);
  const truth = policyChecks(order);
  const rng = rngFor(seed, 'trial', version, key, ...draw);
  const answers = { ...truth };
  for (const c of CHECKS) if (rng() < errorRate(version, order, c, key, seed)) answers[c] = !truth[c];
  const output = decide(answers);
  const expected = decide(truth);
  const firstWrong = CHECKS.find((c) => answers[c] !== truth[c]);
  const failureCategory =
    output === expected || firstWrong === undefined ? null : FAILURE_OF[firstWrong][answers[firstWrong] ? 0 : 1];
  const tokens = { input: 900 + Math.floor(rng() * 300), output: 120 + Math.floor(rng() * 80) };
  return {
    output,
    checks: CHECKS.map((name) => ({ name, answer: answers[name], passed: answers[name] === truth[name] })),
    actions: [
      { tool: 'lookup_order', arguments: { item: order.item } },
      { tool: 'check_return_window', arguments: { days_since_delivery: order.days_since_delivery } },
      { tool: 'verify_proof_of_purchase', arguments: { proof: order.proof } },
      { tool: output === 'approve' ? 'issue_refund' : 'send_denial', arguments: { amount_usd: order.price_usd } },
    ],
    failureCategory,
    latencyMs: Math.round(800 + rng() * 1400),
    tokens,
    costUsd: Math.round((tokens.input * 0.25 + tokens.output * 1.25) / 1000) / 1000,
  };
};
