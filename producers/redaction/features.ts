/**
 * What one pass over a text tells the finders before they look: each finder needs a certain shape of digits (a card
 * 13 digits close together, a phone 7, an SSN 9 …), an `@` or a written-out "at", or a long base64 run, and most
 * strings (JSON keys, roles, prose with a few small numbers) have none of them. A finder that cannot match is not run;
 * every test here is necessary for its finder's own patterns, so skipping one changes nothing it would have found.
 */
export interface TextFeatures {
  /** ASCII digits in the text. */
  readonly digits: number;
  /**
   * Digits in the largest cluster: digits with at most 3 characters of any kind between neighbours. Every number the
   * finders look for is one cluster (their separators are at most 3 characters), so it holds at most this many.
   */
  readonly cluster: number;
  /** The longest run of adjacent digits. */
  readonly run: number;
  /** An `@`. */
  readonly at: boolean;
  /** "at" (any case) between a space or bracket and a space or bracket: `jane at example`, `jane[at]example`. */
  readonly atWord: boolean;
  /** A run of 16+ base64 characters (`A-Z a-z 0-9 + / _ -`). */
  readonly base64Run: boolean;
}

export const isBase64Char = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 95 || c === 45;

/** Space or an opening bracket (before "at"), space or a closing bracket (after it). */
const opens = (c: number): boolean => c === 32 || c === 91 || c === 40 || c === 123 || c === 60;
const closes = (c: number): boolean => c === 32 || c === 93 || c === 41 || c === 125 || c === 62;

const compute = (text: string): TextFeatures => {
  let digits = 0;
  let cluster = 0;
  let inCluster = 0;
  let lastDigit = -10;
  let run = 0;
  let inRun = 0;
  let b64 = 0;
  let base64Run = false;
  let at = false;
  let atWord = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      digits++;
      inCluster = i - lastDigit <= 4 ? inCluster + 1 : 1;
      if (inCluster > cluster) cluster = inCluster;
      lastDigit = i;
      if (++inRun > run) run = inRun;
      if (++b64 >= 16) base64Run = true;
      continue;
    }
    inRun = 0;
    if (isBase64Char(c)) {
      if (++b64 >= 16) base64Run = true;
      if (
        (c === 116 || c === 84) /* t */ &&
        i >= 2 &&
        (text.charCodeAt(i - 1) | 32) === 97 /* a */ &&
        opens(text.charCodeAt(i - 2)) &&
        i + 1 < n &&
        closes(text.charCodeAt(i + 1))
      )
        atWord = true;
      continue;
    }
    b64 = 0;
    if (c === 64) at = true;
  }
  return { digits, cluster, run, at, atWord, base64Run };
};

let lastText: string | undefined;
let last: TextFeatures = compute('');

/** Features that let every finder run: what `withoutPrefilters` answers. */
const EVERYTHING: TextFeatures = {
  digits: Infinity,
  cluster: Infinity,
  run: Infinity,
  at: true,
  atWord: true,
  base64Run: true,
};
let prefilters = true;

/**
 * Runs `fn` with every pre-filter open (each finder scans every text): the reference the pre-filters are tested
 * against (features.unit.test.ts: the same output, text for text).
 */
export const withoutPrefilters = <T>(fn: () => T): T => {
  prefilters = false;
  try {
    return fn();
  } finally {
    prefilters = true;
  }
};

/** Whether pre-filters are on (a finder with a pre-filter of its own asks). */
export const prefiltering = (): boolean => prefilters;

/**
 * The features of a text. The finders run one after another over the same string, so the last text's features are
 * kept: each finder asks, and the pass is made once per text (again only after a finder changed it).
 */
export const featuresOf = (text: string): TextFeatures => {
  if (!prefilters) return EVERYTHING;
  if (text !== lastText) {
    last = compute(text);
    lastText = text;
  }
  return last;
};
