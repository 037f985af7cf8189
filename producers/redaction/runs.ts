import { isAsciiLetter, isDigit } from './text.ts';

/** A run of digit groups joined by separators, as a phone or card number is written. */
export interface DigitRun {
  readonly start: number;
  readonly end: number;
  /** [start, end) of each group of digits, in order. */
  readonly groups: readonly (readonly [number, number])[];
}

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
    // digits glued to a word (`A5551234567`, `v2`) are part of an identifier: skipped with the run
    const prev = i === 0 ? 32 : text.charCodeAt(i - 1);
    const glued = isAsciiLetter(prev) || (prev > 127 && /\p{L}/u.test(text[i - 1]!));
    if (digits >= minDigits && !glued) {
      const groups: [number, number][] = [];
      for (let b = 0; b < bounds.length; b += 2) groups.push([bounds[b]!, bounds[b + 1]!]);
      runs.push({ start: i, end: j, groups });
    }
    i = j + 1;
  }
  return runs;
};
