import { decodeHTML } from 'entities';

/**
 * Characters that change nothing a reader sees, put between the characters of an email or a number to hide it from a
 * pattern: zero-width spaces and joiners, the soft hyphen, bidi marks and isolates, word joiners, variation selectors,
 * the BOM, Hangul fillers.
 */
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g;
/** Dashes and minus signs of other scripts (a full-width phone number's `−`): a plain hyphen. */
const DASHES = /[\u2010-\u2015\u2212\u30fc\ufe58\ufe63\uff0d]/g;
const NON_ASCII = /[^\x20-\x7e\t\n\r]/;
/** Spaces NFKC leaves alone (or that a later decode brings back): all become a plain space. */
const SPACES = /[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/g;

/**
 * Percent-decoding escape by escape, not all or nothing: every run of `%XX` escapes that is valid UTF-8 is decoded,
 * a run that is not is decoded where it is plain ASCII, and a `%` that starts no escape (`100% please`) stays.
 */
export const percentDecode = (text: string): string => {
  if (!text.includes('%')) return text;
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%([0-7][0-9A-Fa-f])/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
  });
};

/** JSON and JavaScript escapes written out as text (`\u0040`, `\x40`): decoded one by one. */
export const unescapeJson = (text: string): string => {
  if (!text.includes('\\')) return text;
  return text
    .replace(
      /\\u\{([0-9A-Fa-f]{1,6})\}|\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})/g,
      (m, braced?: string, u?: string, x?: string) => {
        const code = parseInt(braced ?? u ?? x ?? '', 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : m;
      },
    )
    .replace(/\\([/"'@.])/g, '$1');
};

/** HTML entities (`&#64;`, `&#x40;`, `&commat;`, `&period;`), by the `entities` package's HTML5 decoder. */
export const unescapeHtml = (text: string): string => (text.includes('&') ? decodeHTML(text) : text);

/** Text decoded by every unescape, again while it changes (double encoding: `%2540`, `&amp;#64;`), at most 3 times. */
const decodeAll = (text: string): string => {
  let out = text;
  for (let round = 0; round < 3; round++) {
    const next = unescapeHtml(unescapeJson(percentDecode(out)));
    if (next === out) break;
    out = next;
  }
  return out;
};

/**
 * The text redaction looks at: Unicode NFKC (full-width digits and letters, `＠`, compatibility spaces), invisible
 * characters removed, every space a plain space, and percent, JSON and HTML escapes decoded. Each step is one pass;
 * the whole is linear in the text's length.
 */
export const normalizeForRedaction = (text: string): string => {
  let out = text;
  // Most text is ASCII: NFKC and the invisible-character scan are needed only when something is not.
  if (NON_ASCII.test(out)) out = out.normalize('NFKC').replace(INVISIBLE, '').replace(SPACES, ' ').replace(DASHES, '-');
  if (out.includes('%') || out.includes('\\') || out.includes('&')) {
    const decoded = decodeAll(out);
    if (decoded !== out)
      out = NON_ASCII.test(decoded)
        ? decoded.normalize('NFKC').replace(INVISIBLE, '').replace(SPACES, ' ').replace(DASHES, '-')
        : decoded;
  }
  return out;
};
