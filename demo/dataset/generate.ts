import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHECKS, decide, policyChecks, type Order } from '../refundPolicy.ts';
import { pick, rngFor, shuffled, weighted, type Rng } from '../rng.ts';
import { DEMO_SEED, type DemoRow } from './demoRow.ts';

/**
 * Generates the refund-review dataset deterministically from a seed.
 * Run `npx tsx demo/dataset/generate.ts` to rewrite `refund-review.jsonl`; a unit test checks the committed file
 * is exactly what this produces.
 *
 * Must-not-break rows are tagged by a rule fixed before any result is seen: high-value refunds (≥ $500) that the
 * policy denies. Eight rows are planted: four whose only proof is a screenshot of a shopping cart but which meet
 * every other criterion (the baseline denies them; the candidate's looser proof instruction approves them), and
 * four with the same screenshot that are also outside the window (the verdict stays deny).
 */
export const MUST_NOT_BREAK_MIN_USD = 750;

const ITEMS = [
  ['Blender', 60, 180],
  ['Espresso machine', 180, 900],
  ['Wireless headphones', 40, 400],
  ['Laptop', 600, 2400],
  ['Office chair', 120, 700],
  ['Running shoes', 50, 220],
  ['Smartwatch', 150, 800],
  ['Rain jacket', 40, 300],
  ['Stand mixer', 200, 650],
  ['4K monitor', 250, 1200],
  ['Robot vacuum', 180, 1000],
  ['Cast-iron pan', 20, 120],
  ['Desk lamp', 15, 90],
  ['Camera lens', 300, 1900],
  ['Kids bike', 90, 350],
  ['Air purifier', 90, 600],
] as const;

const PROOF_TEXT: Record<Order['proof'], string> = {
  receipt: 'I have the receipt attached.',
  order_number: 'My order number is in the subject line.',
  card_statement: "I can't find the receipt, but my card statement shows the charge.",
  cart_screenshot: 'I only have a screenshot of my shopping cart from checkout.',
  other_retailer_receipt: 'Here is my receipt (it is from another store, same model).',
  none: 'I lost the receipt and the order email.',
};
const CONDITION_TEXT: Record<Order['condition'], string> = {
  arrived_damaged: 'It arrived with a cracked housing.',
  defective: 'It stopped working after two uses.',
  missing_parts: 'The box was missing a part listed in the manual.',
  unopened: "It's still sealed in the original box; I changed my plans.",
  cosmetic_wear: 'There are a few scratches from using it, otherwise it works.',
  damaged_packaging_only: 'The outer box was crushed, the item itself looks fine.',
  changed_mind: "I've used it a few times and don't like it.",
};

const message = (o: Order): string =>
  `I'd like a refund for the ${o.item.toLowerCase()} ($${o.price_usd.toFixed(2)}), delivered ${o.days_since_delivery} days ago. ` +
  `${CONDITION_TEXT[o.condition]} ${PROOF_TEXT[o.proof]}`;

export const randomOrder = (rng: Rng): Order => {
  const [item, lo, hi] = pick(rng, ITEMS);
  const price = Math.round(Math.exp(Math.log(lo) + rng() * (Math.log(hi) - Math.log(lo))) * 100) / 100;
  const days = weighted<() => number>(rng, [
    [() => 1 + Math.floor(rng() * 27), 55],
    [() => 28 + Math.floor(rng() * 6), 25],
    [() => 34 + Math.floor(rng() * 57), 20],
  ])();
  const proof = weighted<Order['proof']>(rng, [
    ['receipt', 34],
    ['order_number', 30],
    ['card_statement', 13],
    ['other_retailer_receipt', 10],
    ['none', 13],
  ]);
  const condition = weighted<Order['condition']>(rng, [
    ['arrived_damaged', 18],
    ['defective', 17],
    ['unopened', 17],
    ['changed_mind', 12],
    ['cosmetic_wear', 13],
    ['damaged_packaging_only', 11],
    ['missing_parts', 12],
  ]);
  return { item, price_usd: price, days_since_delivery: days, proof, condition };
};

/** Four screenshot-only refunds that meet every other criterion; the first one is high value (must not break). */
const plantedRegressions = (rng: Rng): Order[] =>
  [1249, 149.99, 89.5, 329].map((price_usd, i) => ({
    item: (['Espresso machine', 'Wireless headphones', 'Blender', 'Office chair'] as const)[i]!,
    price_usd,
    days_since_delivery: 3 + Math.floor(rng() * 20),
    proof: 'cart_screenshot' as const,
    condition: (['arrived_damaged', 'defective', 'unopened', 'arrived_damaged'] as const)[i]!,
  }));

const plantedScreenshotsOutsideWindow = (rng: Rng): Order[] =>
  [0, 1, 2, 3].map(() => ({
    ...randomOrder(rng),
    proof: 'cart_screenshot' as const,
    days_since_delivery: 40 + Math.floor(rng() * 40),
  }));

export const rowOf = (row_id: string, order: Order, extraTags: readonly string[] = []): DemoRow => {
  const checks = policyChecks(order);
  const expected = decide(checks);
  const tags = [...extraTags];
  if (order.price_usd >= MUST_NOT_BREAK_MIN_USD) tags.push('high_value');
  if (order.price_usd >= MUST_NOT_BREAK_MIN_USD && expected === 'deny') tags.push('must_not_break');
  return {
    row_id,
    input: JSON.stringify({ message: message(order), order }),
    expected,
    expected_checks: Object.fromEntries(CHECKS.map((name) => [name, checks[name]])),
    tags,
  };
};

export const generateDataset = (seed: number = DEMO_SEED, size = 200): DemoRow[] => {
  const rng = rngFor(seed, 'dataset');
  const planted = [...plantedRegressions(rng), ...plantedScreenshotsOutsideWindow(rng)];
  const random = Array.from({ length: size - planted.length }, () => randomOrder(rng));
  return shuffled(rng, [...planted, ...random]).map((order, i) => rowOf(`R${String(i + 1).padStart(3, '0')}`, order));
};

export const toJsonl = (rows: readonly DemoRow[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('./refund-review.jsonl', import.meta.url));
  writeFileSync(out, toJsonl(generateDataset()));
  process.stdout.write(`wrote ${out}\n`);
}
