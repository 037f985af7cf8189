import { contextBefore } from './context.ts';
import { isAsciiLetter, isDigit } from './text.ts';

/** A run of digit groups joined by separators, as a phone or card number is written. */
export interface DigitRun {
  readonly start: number;
  readonly end: number;
  /** [start, end) of each group of digits, in order. */
  readonly groups: readonly (readonly [number, number])[];
}

/**
 * A machine id's shortest hex form: trace.ts's MACHINE_ID (`[0-9a-f]{16,64}`, a W3C span id is 16). A token that
 * starts with digits is taken for such an id only from this length on, and only if all of it is hex.
 */
export const HEX_ID_MIN = 16;

/** Words before a number that say it is a card (a card is not a phone word: context.ts has no kind for it). */
const CARD_BEFORE =
  /\b(?:card|cc|visa|mastercard|amex|credit|debit)\b(?:\s{0,3}(?:number|num|no\.?|#))?\s{0,3}[:=]?\s{0,3}$/i;

const isHexChar = (c: number): boolean => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/**
 * Whether the one-block digit run at [start, end), with an ASCII letter at `end`, begins a hex id (`2025550123abcdef`,
 * `4111111111111111abc…`): the whole token (letters and digits from `start`) is hex and HEX_ID_MIN long or more, no
 * `+` is before it (`+14155550149abc` is a phone), and no phone or card word is (`call 4155550149abcdef`). Anything
 * else glued after a number (`4155550149now`, `4111111111111111exp`, `07700900123abc`) leaves the number found.
 */
const startsHexId = (text: string, start: number, end: number): boolean => {
  if (start > 0 && text.charCodeAt(start - 1) === 43 /* + */) return false;
  let k = end;
  while (k < text.length && (isDigit(text.charCodeAt(k)) || isAsciiLetter(text.charCodeAt(k)))) {
    if (!isHexChar(text.charCodeAt(k))) return false;
    k++;
  }
  if (k - start < HEX_ID_MIN) return false;
  return contextBefore(text, start) !== 'phone' && !CARD_BEFORE.test(text.slice(Math.max(0, start - 40), start));
};

/**
 * Every maximal run of digit groups joined by at most `maxSep` separator characters from `seps`, starting where no
 * letter or digit is just before. One pass over the text: linear in its length, whatever it holds.
 */
export const digitRuns = (text: string, seps: string, maxSep: number, minDigits = 1): DigitRun[] => {
  const runs: DigitRun[] = [];
  const n = text.length;
  // group bounds of the run being read, reused: most runs are short and dropped, and allocate nothing
  const bounds: number[] = [];
  let i = 0;
  while (i < n) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    bounds.length = 0;
    let digits = 0;
    let j = i;
    for (;;) {
      const g = j;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      bounds.push(g, j);
      digits += j - g;
      let k = j;
      while (k < n && k - j < maxSep && seps.includes(text[k]!)) k++;
      if (k === j || k >= n || !isDigit(text.charCodeAt(k))) break;
      j = k;
    }
    // digits glued to a word (`A5551234567`, `v2`) are part of an identifier: skipped with the run. So are digits
    // written as one block that begin a hex id (`2025550123abcdef`, the same token as `abc2025550123def`): see
    // startsHexId. Letters of a script written without spaces (`13812345678联系`) and digits in groups
    // (`202 555 0123abc`) leave the number as it is.
    const prev = i === 0 ? 32 : text.charCodeAt(i - 1);
    const glued =
      isAsciiLetter(prev) ||
      (prev > 127 && /\p{L}/u.test(text[i - 1]!)) ||
      (bounds.length === 2 && j < n && isAsciiLetter(text.charCodeAt(j)) && startsHexId(text, i, j));
    if (digits >= minDigits && !glued) {
      const groups: [number, number][] = [];
      for (let b = 0; b < bounds.length; b += 2) groups.push([bounds[b]!, bounds[b + 1]!]);
      runs.push({ start: i, end: j, groups });
    }
    i = j + 1;
  }
  return runs;
};
