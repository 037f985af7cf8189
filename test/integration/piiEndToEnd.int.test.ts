import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { digitsOf, emails, secrets } from '../../producers/sampler/piiCorpus.testkit.ts';
import { passk, passkServer } from '../browser/processes.ts';

/**
 * Issue #13: PII end to end. Traces carrying the whole corpus (200+ values in many countries' formats, in the input,
 * the output, the user's comment and as JSON numbers) go through `passk sample`, the embedded log, `passk process`,
 * the store, the dashboard API (`passk serve`) and `passk review`; each of them is read back, and none holds a value.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'passk-pii-e2e-'));
const inputDir = mkdtempSync(join(tmpdir(), 'passk-pii-input-')); // the raw traces, outside the data directory
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(inputDir, { recursive: true, force: true });
});

/** Digits with their separators (spaces, dots, dashes, brackets, slashes) removed, NFKC first (full-width digits). */
const collapsed = (text: string): string => text.normalize('NFKC').replace(/(\d)[\s.\-()/\u00a0]+(?=\d)/g, '$1');
/** The values of the corpus found in `text`: as written, NFKC-normalized, or as their run of digits (9+ digits). */
const leaksIn = (text: string): string[] => {
  const plain = collapsed(text);
  return [
    ...secrets.filter((v) => {
      const d = digitsOf(v);
      return text.includes(v) || plain.includes(v.normalize('NFKC')) || (d.length >= 9 && plain.includes(d));
    }),
    ...emails.filter(
      (v) => text.includes(v) || plain.includes(v.normalize('NFKC')) || plain.includes(decodeURIComponent(v)),
    ),
  ];
};
const allBytes = (d: string): string =>
  readdirSync(d)
    .map((f) => join(d, f))
    .map((p) => (statSync(p).isDirectory() ? allBytes(p) : readFileSync(p).toString('utf8')))
    .join('\n');

describe('PII through every stage', () => {
  it('leaves no corpus value in the log, the store, the dashboard API or review', async () => {
    const all = [...secrets, ...emails];
    const PER = 6;
    const lines: string[] = [];
    for (let i = 0; i * PER < all.length; i++) {
      const vs = all.slice(i * PER, (i + 1) * PER);
      const numeric = secrets[i % secrets.length]!;
      lines.push(
        JSON.stringify({
          trace_id: `t${i}`,
          agent_version: 'support-v3',
          segment: i % 2 ? 'free' : 'enterprise',
          input: {
            message: `Hi, I am ${vs[0]}; call ${vs[1]}`,
            contact: vs[2],
            order_value: 129,
            // a number given as a JSON number is PII too when it is one (digits with a leading 0, as "00…", would lose
            // it as a number: not the value any more)
            ...(/^[1-9]\d{11,18}$/.test(digitsOf(numeric)) ? { card: Number(digitsOf(numeric)) } : {}),
          },
          output: `noted ${vs[3]}`,
          user_signals: { comment: `reach me at ${vs[4]} or ${vs[5] ?? ''}`, rating: 1 },
          ...(/^[1-9]\d{11,18}$/.test(digitsOf(numeric)) ? { tags: ['n'] } : {}),
          verdicts: [{ grader: 'policy-check', passed: false }],
          occurred_at: Date.now() - 3_600_000 + i,
        }),
      );
    }
    expect(leaksIn(lines.join('\n')).length).toBeGreaterThanOrEqual(200); // the check finds them where they are
    const file = join(inputDir, 'traces.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');

    const sampled = await passk(['--data-dir', dataDir, 'sample', file, '--rate', '1', '--seed', '1', '--json']);
    expect(sampled.code, sampled.stderr).toBe(0);
    expect(leaksIn(sampled.stdout)).toEqual([]);
    // the log: every byte of the embedded log's files (SQLite pages and WAL are not compressed)
    expect(leaksIn(allBytes(dataDir))).toEqual([]);

    const processed = await passk(['--data-dir', dataDir, 'process', '--until-caught-up']);
    expect(processed.code, processed.stderr).toBe(0);
    const store = await openStore(PasskConfig.parse({ dataDir }), { migrate: false });
    try {
      const rows = await (
        await store.client.query({ query: 'SELECT * FROM traces FINAL', format: 'JSONEachRow' })
      ).json();
      expect(rows).toHaveLength(lines.length);
      expect(leaksIn(JSON.stringify(rows))).toEqual([]);
      const dlq = await (
        await store.client.query({ query: 'SELECT * FROM dead_letters', format: 'JSONEachRow' })
      ).json();
      expect(dlq).toEqual([]);
    } finally {
      await store.close();
    }

    const review = await passk(['--data-dir', dataDir, 'review', '--limit', '1000', '--json']);
    expect(review.code, review.stderr).toBe(0);
    expect(JSON.parse(review.stdout) as { source: string; failures: unknown[] }).toMatchObject({ source: 'store' });
    expect((JSON.parse(review.stdout) as { failures: unknown[] }).failures).toHaveLength(lines.length);
    expect(leaksIn(review.stdout)).toEqual([]);
    const reviewText = await passk(['--data-dir', dataDir, 'review', '--limit', '1000']);
    expect(leaksIn(reviewText.stdout)).toEqual([]);

    const server = await passkServer(['--data-dir', dataDir, 'serve', '--port', '0', '--json'], (line) =>
      line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    try {
      const api: string[] = [await (await fetch(`${server.value}api/production`)).text()];
      for (let i = 0; i < lines.length; i++) {
        const r = await fetch(`${server.value}api/trace?trace_id=t${i}`);
        expect(r.status).toBe(200);
        api.push(await r.text());
      }
      expect(api.filter((t) => t.includes('"input"')).length).toBe(lines.length);
      expect(leaksIn(api.join('\n'))).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 300_000);
});
