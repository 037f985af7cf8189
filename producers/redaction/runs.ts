import { isAsciiLetter, isDigit } from './text.ts';

/** A run of digit groups joined by separators, as a phone or card number is written. */
export interface DigitRun {
  readonly start: number;
  readonly end: number;
  /** [start, end) of each group of digits, in order. */
  readonly groups: readonly (readonly [number, number])[];
}

/** A phone's extension written right after its digits: `x45`, `ext12`, `ext.12`, `extn 12`. */
const EXTENSION = /^(?:x|ext|extn)\.? ?\d/i;

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
    // written as one block with letters right after (`2025550123abc…`, a hex token that starts with digits): the
    // same token as `abc2025550123…`, wherever it starts. Not an extension (`x45`, `ext12`), and not a letter of a
    // script written without spaces (`13812345678联系`), nor digits in groups (`202 555 0123…`): a number written so.
    const prev = i === 0 ? 32 : text.charCodeAt(i - 1);
    const glued =
      isAsciiLetter(prev) ||
      (prev > 127 && /\p{L}/u.test(text[i - 1]!)) ||
      (bounds.length === 2 && j < n && isAsciiLetter(text.charCodeAt(j)) && !EXTENSION.test(text.slice(j, j + 8)));
    if (digits >= minDigits && !glued) {
      const groups: [number, number][] = [];
      for (let b = 0; b < bounds.length; b += 2) groups.push([bounds[b]!, bounds[b + 1]!]);
      runs.push({ start: i, end: j, groups });
    }
    i = j + 1;
  }
  return runs;
};
