import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { readLog } from '../../producers/logReader.ts';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { passk, passkServer } from '../browser/processes.ts';

/** `passk ingest --otlp-policy FILE`: the policy file samples the OTLP receiver's traces; a bad file exits 2. */
const TOKEN = 'otlp-policy-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'passk-otlp-policy-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const span = (i: number, segment: string) => ({
  traceId: i.toString(16).padStart(32, '0'),
  spanId: (i + 1).toString(16).padStart(16, '0'),
  name: 'invoke_agent',
  endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1_000_000n),
  attributes: [
    { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
    { key: 'passk.agent_version', value: { stringValue: 'cli-v1' } },
    { key: 'passk.segment', value: { stringValue: segment } },
  ],
});

describe('passk ingest --otlp-policy', () => {
  it('samples OTLP traces by the policy file', async () => {
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ name: 'cli-policy', rate: 1, segments: { noisy: 0 } }));
    const server = await passkServer(
      ['--data-dir', data, 'ingest', '--port', '0', '--token', TOKEN, '--otlp-policy', policy, '--json'],
      (line) => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }).url : undefined),
    );
    try {
      const res = await fetch(new URL('/v1/traces', server.value), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          resourceSpans: [{ scopeSpans: [{ spans: [span(1, 'noisy'), span(2, 'noisy'), span(3, 'main')] }] }],
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    } finally {
      await server.stop();
    }
    const log = await createEmbeddedEventLog({ dataDir: data });
    const traces: TraceSampled[] = [];
    try {
      await readLog(log, { topics: ['passk.traces'] }, (e) => traces.push(e.event as TraceSampled));
    } finally {
      await log.close();
    }
    expect(traces.map((t) => [t.segment, t.sampling.probability])).toEqual([['main', 1]]);
    expect(traces[0]!.sampling.policy).toMatch(/^cli-policy@/);
  });

  it('exits 2 naming the file and field of a bad policy', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ rate: 3 }));
    const r = await passk(['--data-dir', data, 'ingest', '--port', '0', '--token', TOKEN, '--otlp-policy', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.json');
    expect(r.stderr).toContain('rate');
  });
});
