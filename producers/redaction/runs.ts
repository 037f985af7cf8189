import { isDigit, isWordChar } from './text.ts';

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
export const digitRuns = (text: string, seps: string, maxSep: number): DigitRun[] => {
  const runs: DigitRun[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    // a run starts at a digit (or at the separators just before it, like "(" or "+", which the caller reads)
    const groups: [number, number][] = [];
    let j = i;
    for (;;) {
      const g = j;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      groups.push([g, j]);
      let k = j;
      while (k < n && k - j < maxSep && seps.includes(text[k]!)) k++;
      if (k === j || k >= n || !isDigit(text.charCodeAt(k))) break;
      j = k;
    }
    const start = groups[0]![0];
    if (start === 0 || !isWordChar(text.charCodeAt(start - 1)) || !/\p{L}/u.test(text[start - 1]!))
      runs.push({ start, end: j, groups });
    // digits glued to a word (`A5551234567`, `v2`) are part of an identifier: skipped with the run
    i = j + 1;
  }
  return runs;
};
