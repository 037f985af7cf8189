import { featuresOf } from './features.ts';
import { isWordChar, type Span, spanRedactor } from './text.ts';
import { pushAll } from '../../processors/core/arrays.ts';

/**
 * Emails by a scanner anchored on each `@` (and each written-out "at"), never a pattern run from every position: the
 * local part is read backwards and the domain forwards, each within RFC 5321's bounds, so the work is linear in the
 * text however long a run without `@` is. Forms: dot-atoms with every RFC 5322 atom character, non-ASCII (RFC 6531),
 * quoted local parts (`"jane doe"@example.com`), a comment before the `@`, IP-literal domains (`jane@[192.0.2.1]`,
 * `jane@[IPv6:2001:db8::1]`), and the written-out forms `jane [at] example [dot] com`, `jane at example dot com`.
 */
const LOCAL_MAX = 64;
const DOMAIN_MAX = 253;
/** RFC 5322 atext, less the characters that end a word in prose (`/`, `=`, `?`, `|`, backtick, braces, `^`). */
const isLocalChar = (c: number): boolean =>
  isWordChar(c) ||
  c === 46 /* . */ ||
  c === 43 /* + */ ||
  c === 45 /* - */ ||
  c === 37 /* % */ ||
  c === 39 /* ' */ ||
  c === 33 /* ! */ ||
  c === 35 /* # */ ||
  c === 36 /* $ */ ||
  c === 38 /* & */ ||
  c === 42 /* * */ ||
  c === 126 /* ~ */ ||
  c === 61; /* = */
const isLabelChar = (c: number): boolean => (isWordChar(c) && c !== 95 /* _ */ ? true : c === 45);

/** Start of the local part ending at `at` (exclusive), or -1. */
const localStart = (text: string, at: number): number => {
  let i = at;
  // a comment right before the @: jane(work)@example.com
  if (text.charCodeAt(i - 1) === 41 /* ) */) {
    const open = text.lastIndexOf('(', i - 1);
    if (open < 0 || i - open > LOCAL_MAX || text.slice(open, i).includes('@')) return -1;
    i = open;
  }
  if (text.charCodeAt(i - 1) === 34 /* " */) {
    // a quoted local part: back to the opening quote (an escaped quote \" does not close it)
    let j = i - 2;
    while (j >= 0 && i - j <= LOCAL_MAX + 2) {
      if (text.charCodeAt(j) === 34 && text.charCodeAt(j - 1) !== 92) return j;
      j--;
    }
    return -1;
  }
  let j = i;
  while (j > 0 && i - j < LOCAL_MAX && isLocalChar(text.charCodeAt(j - 1))) j--;
  // a local part longer than the limit: take all of it anyway (better too much than a leak)
  while (j > 0 && isLocalChar(text.charCodeAt(j - 1)) && i - j < 4 * LOCAL_MAX) j--;
  while (j < i && (text[j] === '.' || text[j] === "'")) j++;
  return j < i ? j : -1;
};

/** End of the domain starting at `from`, or -1 when there is no domain. */
const domainEnd = (text: string, from: number): number => {
  if (text[from] === '[') {
    const close = text.indexOf(']', from);
    if (close < 0 || close - from > 64) return -1;
    return /^\[(?:IPv6:[0-9A-Fa-f:.]+|[0-9]{1,3}(?:\.[0-9]{1,3}){3})\]$/i.test(text.slice(from, close + 1))
      ? close + 1
      : -1;
  }
  let i = from;
  let lastDot = -1;
  while (i < text.length && i - from < DOMAIN_MAX) {
    const c = text.charCodeAt(i);
    if (isLabelChar(c)) i++;
    else if (c === 46 && i > from && isLabelChar(text.charCodeAt(i + 1)) && text[i - 1] !== '.') {
      lastDot = i;
      i++;
    } else break;
  }
  if (lastDot < 0) return -1;
  const tld = text.slice(lastDot + 1, i);
  return /^(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/iu.test(tld) ? i : -1;
};

const findAtSign = (text: string): Span[] => {
  const spans: Span[] = [];
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    const start = localStart(text, at);
    if (start < 0) continue;
    const end = domainEnd(text, at + 1);
    if (end < 0) continue;
    spans.push({ start, end, label: '[EMAIL]' });
    at = end - 1;
  }
  return spans;
};

/** Top-level domains accepted after a plain " at " (a bracketed [at] or a written "dot" needs none). */
const COMMON_TLDS = new Set(
  'com org net edu gov mil int io co ai app dev me info biz us uk ca au nz in jp cn kr br mx ar es fr de it nl be ch at se no dk fi pl pt ie ru ua cz gr tr za eu'.split(
    ' ',
  ),
);
const DOT_MARK = / {0,3}[[({<] ?dot ?[\])}>] {0,3}| {1,3}dot {1,3}|\./giy;
const WORD = /[\p{L}\p{N}_%+-]{1,63}/uy;

const matchAt = (re: RegExp, text: string, at: number): RegExpExecArray | null => {
  re.lastIndex = at;
  return re.exec(text);
};

/** `jane [at] example [dot] com`, `jane.doe at example dot co dot uk`, `jane at example.com` (a common TLD). */
const findWrittenOut = (text: string): Span[] => {
  const spans: Span[] = [];
  // no leading \s* or \s+: over a long run of spaces that would try every position from every position
  const marks = /[[({<] ?at ?[\])}>]|(?<= )at(?= )|(?<= )@(?= )/gi;
  for (let m = marks.exec(text); m; m = marks.exec(text)) {
    const bracketed = /[[({<]/.test(m[0]);
    let markStart = m.index;
    while (markStart > 0 && m.index - markStart < 3 && text[markStart - 1] === ' ') markStart--;
    let markEnd = m.index + m[0].length;
    while (markEnd < text.length && markEnd - (m.index + m[0].length) < 3 && text[markEnd] === ' ') markEnd++;
    // the local part: a word, and more words joined by dots or "dot" marks before it
    let start = markStart;
    let words = 0;
    for (;;) {
      let j = start;
      while (j > 0 && start - j < 64 && /[\p{L}\p{N}_%+-]/u.test(text[j - 1]!)) j--;
      if (j === start) break;
      words++;
      start = j;
      const dot = /(?: {0,3}[[({<] ?dot ?[\])}>] {0,3}| {1,3}dot {1,3}|\.)$/i.exec(
        text.slice(Math.max(0, start - 14), start),
      );
      if (!dot || words >= 4) break;
      const prevEnd = start - dot[0].length;
      if (prevEnd <= 0 || !/[\p{L}\p{N}]/u.test(text[prevEnd - 1]!)) break;
      start = prevEnd;
    }
    if (words === 0) continue;
    // the domain: words joined by dots or "dot" marks, at least two
    let end = markEnd;
    const labels: string[] = [];
    let writtenDot = false;
    for (;;) {
      const w = matchAt(WORD, text, end);
      if (!w) break;
      labels.push(w[0]);
      end += w[0].length;
      const d = matchAt(DOT_MARK, text, end);
      if (!d || labels.length >= 6) break;
      const next = matchAt(WORD, text, end + d[0].length);
      if (!next) break;
      if (d[0] !== '.') writtenDot = true;
      end += d[0].length;
    }
    if (labels.length < 2) continue;
    const tld = labels[labels.length - 1]!;
    if (!/^\p{L}{2,24}$/u.test(tld)) continue;
    if (!bracketed && !writtenDot && !COMMON_TLDS.has(tld.toLowerCase())) continue;
    if (!bracketed && !writtenDot && m[0] !== '@' && tld !== tld.toLowerCase()) continue;
    spans.push({ start, end, label: '[EMAIL]' });
    marks.lastIndex = end;
  }
  return spans;
};

export const emailRedactor = spanRedactor('email', (text) => {
  const { at, atWord } = featuresOf(text);
  const spans = at ? findAtSign(text) : [];
  if ((at || atWord) && / at |[[({<] ?at ?[\])}>]| @ /i.test(text)) pushAll(spans, findWrittenOut(text));
  return spans;
});
