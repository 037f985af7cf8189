import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import { createTraceSampler } from '../../producers/sampler/sampler.ts';
import { withTraceSampling } from '../../producers/sampler/middleware.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import type { TraceSampled } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'passk.mjs');

const EMAILS = ['maria.gonzalez@example.com', 'j.smith+orders@mail.example.org'];
const PHONES = ['(415) 555-0132', '+44 20 7946 0958', '212-555-0199'];
const CARDS = ['4111 1111 1111 1111', '5500-0000-0000-0004'];
const SECRET_IDS = ['123-45-6789'];
const PII = [...EMAILS, ...PHONES, ...CARDS, ...SECRET_IDS];
/** Each value also as bare digits/lowercase, so a reformatted copy is caught too. */
const needles = PII.flatMap((v) => [v, v.toLowerCase(), v.replace(/\D/g, '')]).filter((n) => n.length >= 7);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-sample-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every byte under a directory, as latin1 text (so a needle matches wherever it sits in a page). */
const allBytes = (d: string): string =>
  readdirSync(d)
    .map((f) => join(d, f))
    .map((p) => (statSync(p).isDirectory() ? allBytes(p) : readFileSync(p).toString('latin1')))
    .join('\n');

const traces = async (dataDir: string): Promise<TraceSampled[]> => {
  const log = createEmbeddedEventLog({ dataDir });
  const out: TraceSampled[] = [];
  try {
    await readLog(log, { topics: [TOPICS.traces] }, (e) => e.event.type === 'TraceSampled' && out.push(e.event));
  } finally {
    await log.close();
  }
  return out;
};

describe('no unredacted value reaches the log', () => {
  it('passk sample: every trace kept (rate 1), PII in inputs, outputs, signals and error kinds; none of it on disk', async () => {
    const data = join(dir, 'cli');
    const file = join(dir, 'traces.jsonl');
    const lines = Array.from({ length: 60 }, (_, i) =>
      JSON.stringify({
        trace_id: `t${i}`,
        agent_version: 'support-v3',
        segment: i % 3 === 0 ? 'enterprise' : 'free',
        input: {
          message: `I am ${EMAILS[i % 2]}, call me on ${PHONES[i % 3]}`,
          card: CARDS[i % 2],
          ssn: SECRET_IDS[0],
        },
        output: `Refund sent to card ${CARDS[(i + 1) % 2]}; we will email ${EMAILS[(i + 1) % 2]}`,
        user_signals: { comment: `reach me at ${PHONES[(i + 1) % 3]}`, rating: i % 10 === 0 ? 1 : 5 },
        ...(i % 7 === 0 ? { error_kind: `lookup failed for ${EMAILS[0]}` } : {}),
        occurred_at: 1_700_000_000_000 + i,
      }),
    );
    writeFileSync(file, lines.join('\n') + '\n');
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        '--data-dir',
        data,
        'sample',
        file,
        '--rate',
        '1',
        '--redact',
        'ssn=\\d{3}-\\d{2}-\\d{4}',
        '--seed',
        '1',
        '--json',
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const kept = await traces(data);
    expect(kept).toHaveLength(60);
    expect(
      kept.every(
        (t) =>
          t.payload?.input?.includes('[EMAIL]') &&
          t.payload.input.includes('[CARD]') &&
          t.payload.input.includes('[SSN]'),
      ),
    ).toBe(true);
    const bytes = allBytes(data);
    expect(bytes.length).toBeGreaterThan(10_000);
    for (const n of needles) expect(bytes.includes(n), `found "${n}" on disk`).toBe(false);
    expect(bytes.includes('[PHONE]')).toBe(true);
  });

  it('SDK middleware into the embedded log: redacted before it leaves the process', async () => {
    const data = join(dir, 'sdk');
    const log = createEmbeddedEventLog({ dataDir: data });
    const recorder = createRecorder({ publisher: log.publisher });
    const sampler = createTraceSampler({ policy: { rate: 0.5, segments: { vip: 1 } }, recorder, seed: 5 });
    const answer = withTraceSampling(
      async (_q: { text: string; tier: string }) => `We emailed ${EMAILS[1]} and texted ${PHONES[0]}.`,
      {
        sampler,
        agentVersion: 'support-v3',
        segmentOf: (q) => q.tier,
      },
    );
    for (let i = 0; i < 40; i++)
      await answer({ text: `my card is ${CARDS[0]}, mail ${EMAILS[0]}`, tier: i % 2 ? 'vip' : 'free' });
    await sampler.flush();
    await recorder.close();
    await log.close();
    const kept = await traces(data);
    expect(kept.filter((t) => t.segment === 'vip')).toHaveLength(20);
    expect(kept.every((t) => t.sampling.probability === (t.segment === 'vip' ? 1 : 0.5))).toBe(true);
    const bytes = allBytes(data);
    for (const n of needles) expect(bytes.includes(n), `found "${n}" on disk`).toBe(false);
  });
});
