import { describe, expect, it } from 'vitest';
import { DEFAULT_SCOPE, leaks, LOOK_ALIKES, PII_CORPUS, readable } from './corpus.testkit.ts';
import { redactText } from './redact.ts';

/** Recall per category and precision per kind of look-alike, printed, then held to the targets. */
export const scoreCorpus = (redact: (text: string, i: number) => string) => {
  const recall = new Map<string, { n: number; leaked: string[] }>();
  PII_CORPUS.forEach((e, i) => {
    const r = recall.get(e.category) ?? { n: 0, leaked: [] };
    recall.set(e.category, r);
    r.n++;
    const out = redact(e.text, i);
    if (leaks(e, out)) r.leaked.push(`${e.format}: ${JSON.stringify(e.text)} → ${JSON.stringify(out)}`);
  });
  const precision = new Map<string, { n: number; changed: string[] }>();
  LOOK_ALIKES.forEach((l, i) => {
    const p = precision.get(l.kind) ?? { n: 0, changed: [] };
    precision.set(l.kind, p);
    p.n++;
    const out = redact(l.text, PII_CORPUS.length + i);
    if (out !== l.text) p.changed.push(`${JSON.stringify(l.text)} → ${JSON.stringify(out)}`);
  });
  return { recall, precision };
};

export const printScore = (title: string, s: ReturnType<typeof scoreCorpus>): void => {
  const pct = (a: number, n: number) => `${((100 * a) / n).toFixed(1)}%`;
  const lines = [`${title}`, '  category      values  leaked  recall'];
  for (const [c, r] of s.recall)
    lines.push(
      `  ${c.padEnd(12)}  ${String(r.n).padStart(6)}  ${String(r.leaked.length).padStart(6)}  ${pct(r.n - r.leaked.length, r.n).padStart(6)}`,
    );
  lines.push('  look-alike          values  changed  precision');
  for (const [k, p] of s.precision)
    lines.push(
      `  ${k.padEnd(18)}  ${String(p.n).padStart(6)}  ${String(p.changed.length).padStart(7)}  ${pct(p.n - p.changed.length, p.n).padStart(9)}`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
};

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
    const leaked = [...s.recall].flatMap(([c, r]) => (DEFAULT_SCOPE.includes(c as never) ? r.leaked : []));
    expect(leaked).toEqual([]);
    const all = [...s.recall.values()];
    const recall = 1 - all.reduce((a, r) => a + r.leaked.length, 0) / all.reduce((a, r) => a + r.n, 0);
    expect(recall, [...s.recall.values()].flatMap((r) => r.leaked).join('\n')).toBeGreaterThanOrEqual(0.99);
    const changed = [...s.precision.values()].flatMap((p) => p.changed);
    expect(1 - changed.length / LOOK_ALIKES.length, changed.join('\n')).toBeGreaterThanOrEqual(0.99);
  });
});
