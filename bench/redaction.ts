/**
 * The redactor's speed against a tight baseline on the same texts, in the same run: the baseline is the least any
 * redactor must do, NFKC and one regular-expression scan for the anchors of what it looks for (`@`, a run of 7+
 * digits, a 16+ character token), counting them; passk normalizes, scans and checks what it finds. Two lines:
 * traces of ~1.5 KB of text (prose with order numbers, amounts, an email and a phone), and single 1 MB tokens of the
 * shapes that make a backtracking pattern quadratic (no `@`, digits, base64, digits with separators …): for those the
 * figure is the slowest shape's time, and the baseline the same scan of the same token.
 */
import { performance } from 'node:perf_hooks';
import { LOOK_ALIKES, PII_CORPUS } from '../producers/redaction/corpus.testkit.ts';
import { redactText } from '../producers/redaction/index.ts';
import { bigTokens } from '../producers/redaction/tokens.testkit.ts';

const M = 1 << 20;

export interface RedactionBenchLine {
  readonly name: string;
  readonly perSec: number;
  readonly baselinePerSec: number;
  readonly ratio: number;
  readonly bytesPerItem: number;
  /** The slowest 1 MB token's shape and time (the second line only). */
  readonly detail?: string;
}

const ANCHORS = /@|\d{7,}|[A-Za-z0-9+/_-]{16,}/g;
/** The baseline: NFKC and one scan for anchors. A subset of what the redactor does to the same text. */
const baseline = (text: string): number => {
  let n = 0;
  for (const _ of text.normalize('NFKC').matchAll(ANCHORS)) n++;
  return n;
};

const PROSE =
  'Hi, I ordered the blue kettle last week and it arrived damaged. The box was fine but the lid is cracked and it ' +
  'leaks when I pour. I would like a replacement or a refund, whichever is faster. I have attached two photos. ';

/** Texts of ~1.5 KB: prose, three look-alikes and two PII values from the corpus, different in each text. */
export const benchTexts = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => {
    const parts = [
      PROSE,
      LOOK_ALIKES[i % LOOK_ALIKES.length]!.text,
      PROSE,
      PII_CORPUS[(i * 7) % PII_CORPUS.length]!.text,
      LOOK_ALIKES[(i * 3 + 1) % LOOK_ALIKES.length]!.text,
      PROSE,
      PII_CORPUS[(i * 13 + 5) % PII_CORPUS.length]!.text,
      LOOK_ALIKES[(i * 5 + 2) % LOOK_ALIKES.length]!.text,
      PROSE,
    ];
    return parts.join(' ').slice(0, 1_536);
  });

const timeIt = (fn: () => void): number => {
  const t0 = performance.now();
  fn();
  return (performance.now() - t0) / 1000;
};

export const benchRedaction = (opts: { texts?: number; rounds?: number; log?: (l: string) => void } = {}) => {
  const say = opts.log ?? (() => undefined);
  const rounds = opts.rounds ?? 3;
  const texts = benchTexts(opts.texts ?? 20_000);
  const bytes = texts.reduce((a, t) => a + Buffer.byteLength(t), 0) / texts.length;
  let best = 0;
  let bestBase = 0;
  for (let r = 0; r < rounds; r++) {
    let sink = 0;
    const base = texts.length / timeIt(() => texts.forEach((t) => (sink += baseline(t))));
    const ours = texts.length / timeIt(() => texts.forEach((t) => (sink += redactText(t).length)));
    bestBase = Math.max(bestBase, base);
    best = Math.max(best, ours);
    say(
      `redaction round ${r + 1}/${rounds}: baseline ${Math.round(base)}/s, redactText ${Math.round(ours)}/s (${sink})`,
    );
  }
  const lines: RedactionBenchLine[] = [
    {
      name: 'redaction, 1.5 KB texts (traces/s)',
      perSec: best,
      baselinePerSec: bestBase,
      ratio: best / bestBase,
      bytesPerItem: bytes,
    },
  ];
  let worst = { shape: '', seconds: 0, baseline: 0 };
  for (const [shape, token] of Object.entries(bigTokens())) {
    const base = timeIt(() => baseline(token));
    const seconds = timeIt(() => redactText(token));
    say(
      `redaction of a 1 MB token (${shape}): ${(seconds * 1000).toFixed(0)} ms, baseline ${(base * 1000).toFixed(0)} ms`,
    );
    if (seconds > worst.seconds) worst = { shape, seconds, baseline: base };
  }
  lines.push({
    name: 'redaction, one 1 MB token, slowest shape (tokens/s)',
    perSec: 1 / worst.seconds,
    baselinePerSec: 1 / worst.baseline,
    ratio: worst.baseline / worst.seconds,
    bytesPerItem: M,
    detail: `${worst.shape}: ${(worst.seconds * 1000).toFixed(0)} ms`,
  });
  return lines;
};
