import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOOK_ALIKES, PII_CORPUS } from './corpus.testkit.ts';
import { featuresOf, withoutPrefilters } from './features.ts';
import { DEFAULT_REDACTORS, patternRedactor, redactText, redactValue } from './redact.ts';
import { bigTokens } from './tokens.testkit.ts';

/**
 * The pre-filters (features.ts, and the secrets' hint) only skip finders that could not find anything: with them and
 * without them, every text comes out the same.
 */
const same = (text: string) => {
  const reference = withoutPrefilters(() => redactText(text));
  expect(redactText(text)).toBe(reference);
  // a custom pattern that writes digits, before the defaults, and one that joins words after them
  const custom = [patternRedactor('x', /zz/, '4155552671'), ...DEFAULT_REDACTORS, patternRedactor('y', / /, '')];
  expect(redactText(text, custom)).toBe(withoutPrefilters(() => redactText(text, custom)));
  const value = { phone: text, list: [text, { email: text }] };
  expect(redactValue(value)).toEqual(withoutPrefilters(() => redactValue(value)));
};

describe('the redaction pre-filters', () => {
  it('change nothing on the corpus, its look-alikes and the 1 MB shapes (cut to 20 KB)', () => {
    for (const e of PII_CORPUS) same(e.text);
    for (const e of LOOK_ALIKES) same(e.text);
    for (const t of Object.values(bigTokens(20_000))) same(t);
  });

  it('change nothing on random mixes of corpus values, hints and noise', () => {
    const pieces = [
      ...PII_CORPUS.map((e) => e.text),
      ...LOOK_ALIKES.map((e) => e.text),
      'zz',
      'AKIA',
      'eyJ',
      ' at ',
      '[at]',
      '%40',
      '&#64;',
      '\\u0040',
      'key=',
      'Bearer ',
      '-----BEGIN RSA PRIVATE KEY-----',
      'abcdefghijklmnopqrstuvwx',
      '==',
      '\u200b',
      '１２３',
      '\n',
    ];
    const noise = fc.string({ unit: fc.constantFrom(...'ab7 -.@+(%/_Z1=\u200bxX:#tT['.split('')), maxLength: 40 });
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...pieces), noise), { maxLength: 8 }), (parts) => {
        same(parts.join(' '));
        same(parts.join(''));
      }),
      { numRuns: 1_500, seed: 25 },
    );
  });

  it('count digit clusters, runs, "at" words and base64 runs', () => {
    const f = featuresOf('call 415 555-2671, id 12 34 or mail jane at example; key abcdefghijklmnop');
    expect(f).toMatchObject({ cluster: 10, run: 4, at: false, atWord: true, base64Run: true });
    expect(featuresOf('4 1 5    5')).toMatchObject({ digits: 4, cluster: 3, run: 1, base64Run: false });
    expect(featuresOf('that attached at@')).toMatchObject({ at: true, atWord: false });
  });
});
