import { z } from 'zod';

/**
 * The refund policy the demo's agents apply, and the facts of one refund request.
 * A refund is approved when it is requested within 30 days of delivery, with proof of purchase, and the item
 * either arrived damaged or defective, is missing parts, or is unopened. The three intermediate checks are made
 * in that order; the verdict is `approve` only when all three pass.
 */
export const PROOFS = [
  'receipt',
  'order_number',
  'card_statement',
  'cart_screenshot',
  'other_retailer_receipt',
  'none',
] as const;
export const CONDITIONS = [
  'arrived_damaged',
  'defective',
  'missing_parts',
  'unopened',
  'cosmetic_wear',
  'damaged_packaging_only',
  'changed_mind',
] as const;

export const RefundRequest = z.object({
  message: z.string(),
  order: z.object({
    item: z.string(),
    price_usd: z.number().nonnegative(),
    days_since_delivery: z.number().int().nonnegative(),
    proof: z.enum(PROOFS),
    condition: z.enum(CONDITIONS),
  }),
});
export type RefundRequest = z.infer<typeof RefundRequest>;
export type Order = RefundRequest['order'];

export const CHECKS = ['return_window', 'proof_of_purchase', 'damage_criteria'] as const;
export type CheckName = (typeof CHECKS)[number];
export type CheckAnswers = Record<CheckName, boolean>;
export type Decision = 'approve' | 'deny';

export const RETURN_WINDOW_DAYS = 30;
const VALID_PROOF: ReadonlySet<string> = new Set(['receipt', 'order_number', 'card_statement']);
const MEETS_DAMAGE_CRITERIA: ReadonlySet<string> = new Set([
  'arrived_damaged',
  'defective',
  'missing_parts',
  'unopened',
]);

/** The correct answer of every check for an order. */
export const policyChecks = (o: Order): CheckAnswers => ({
  return_window: o.days_since_delivery <= RETURN_WINDOW_DAYS,
  proof_of_purchase: VALID_PROOF.has(o.proof),
  damage_criteria: MEETS_DAMAGE_CRITERIA.has(o.condition),
});

export const decide = (answers: CheckAnswers): Decision => (CHECKS.every((c) => answers[c]) ? 'approve' : 'deny');

/**
 * Which checks are genuinely ambiguous for this order (a human reviewer would pause): a delivery date near the
 * window's edge, a card statement or another retailer's receipt as proof, wear, packaging damage or missing parts.
 */
export const hardChecks = (o: Order): ReadonlySet<CheckName> => {
  const hard = new Set<CheckName>();
  if (o.days_since_delivery >= 28 && o.days_since_delivery <= 33) hard.add('return_window');
  if (o.proof === 'card_statement' || o.proof === 'other_retailer_receipt') hard.add('proof_of_purchase');
  if (o.condition === 'cosmetic_wear' || o.condition === 'damaged_packaging_only' || o.condition === 'missing_parts')
    hard.add('damage_criteria');
  return hard;
};

export const parseRequest = (input: string): RefundRequest => RefundRequest.parse(JSON.parse(input));
