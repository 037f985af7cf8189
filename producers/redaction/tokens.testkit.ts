import { randomBytes } from 'node:crypto';

/**
 * Single tokens of the shapes that make a backtracking pattern quadratic (no `@`, only digits, base64, digits with
 * separators, escapes that do not decode …): the fuzz test runs each at 1 MB, and `npm run bench -- redaction` times
 * them.
 */
export const bigTokens = (size = 1 << 20): Record<string, string> => {
  const rep = (s: string) => s.repeat(Math.ceil(size / s.length)).slice(0, size);
  return {
    'letters, no @': rep('a'),
    digits: rep('7'),
    '@ signs': rep('@'),
    'local part, no domain': rep('ab.c'),
    'a@ repeated': rep('a@'),
    base64: randomBytes(Math.floor(size * 0.75)).toString('base64'),
    // starts with a letter: a random hex token starts with a 10-digit run about one time in a hundred, and a phone
    // or card number at the very start of a string, followed by letters, is redacted (only a run inside the token,
    // with a letter or digit before it, is left alone): that is the redactors' rule at a string's start, not the
    // linearity this shape is here for
    hex:
      'f' +
      randomBytes(size / 2)
        .toString('hex')
        .slice(1),
    'digits and spaces': rep('1 '),
    'digit groups': rep('123 '),
    'digits and dashes': rep('12-'),
    '+ and digits': rep('+1'),
    'brackets and digits': rep('(1'),
    'letters and digits': rep('ab12'),
    'percent escapes': rep('%41'),
    'broken percent escapes': rep('%E2'),
    'HTML entities': rep('&#64;'),
    'JSON escapes': rep('\\u0040'),
    'written " at "': rep('a at '),
    spaces: rep(' '),
    'IBAN-like': rep('DE89'),
    'capitalized words': rep('Abc '),
    'full-width digits': rep('１'),
    'zero-width spaces': rep('\u200b'),
  };
};
