import { describe, expect, it } from 'vitest';
import { leaks, LOOK_ALIKES, missedTargets, PII_CORPUS, printScore, readable, scoreCorpus } from './corpus.testkit.ts';
import { redactText, redactValue } from './redact.ts';

describe('the redaction corpus', () => {
  it(`is large enough: ${PII_CORPUS.length} PII values in ${new Set(PII_CORPUS.map((e) => e.format)).size} formats, ${LOOK_ALIKES.length} look-alikes`, () => {
    expect(PII_CORPUS.length).toBeGreaterThanOrEqual(300);
    expect(new Set(PII_CORPUS.map((e) => e.format)).size).toBeGreaterThanOrEqual(40);
    expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(300);
    // the leak check finds every value where it is written
    expect(PII_CORPUS.filter((e) => !leaks(e, e.text)).map((e) => e.text)).toEqual([]);
    expect(readable('a\u200bb')).toBe('ab');
  });

  it('redactText: no leak in the default scope, ≥ 99% recall overall, ≥ 99% precision on the look-alikes', () => {
    const s = scoreCorpus((t) => redactText(t));
    printScore('redactText over the corpus', s);
    expect(missedTargets(s)).toEqual([]);
  });

  it('redactValue of the texts as JSON values (the sampler parses a JSON text): the same targets', () => {
    const asValue = (t: string): string => {
      let v: unknown = t;
      try {
        v = JSON.parse(t);
      } catch {
        /* text */
      }
      const out = redactValue(v);
      return typeof out === 'string' ? out : JSON.stringify(out);
    };
    const canonical = (t: string) => {
      try {
        return JSON.stringify(JSON.parse(t));
      } catch {
        return t;
      }
    };
    const s = scoreCorpus(asValue, (a, b) => canonical(a) === b);
    expect(missedTargets(s)).toEqual([]);
    // and nothing the text's redaction finds is missed in the parsed value (`{"password": "…"}` lost its key's quotes)
    expect(
      PII_CORPUS.filter((e) => leaks(e, asValue(e.text)) && !leaks(e, redactText(e.text))).map((e) => e.text),
    ).toEqual([]);
  });
});
