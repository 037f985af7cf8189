import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadDemoDataset } from '../../demo/dataset/demoRow.ts';
import { parseRequest } from '../../demo/refundPolicy.ts';
import type { DemoResult } from '../../demo/story.ts';
import { passk } from '../browser/processes.ts';

/**
 * "The same command, pointed at Kafka and a ClickHouse server by config, runs the same loop distributed":
 * `passk demo --no-serve --json` with PASSK_BACKEND=kafka against the test stack's broker and registry, and the
 * embedded chDB store (no ClickHouse server can run on these machines; CLICKHOUSE_URL selects one where it can),
 * gives the same outcome as the embedded run.
 */
type DemoJson = DemoResult & { backend: { log: string; namespace?: string; store: string } };

const planted = loadDemoDataset().find(
  (r) =>
    r.tags.includes('must_not_break') &&
    parseRequest(r.input).order.proof === 'cart_screenshot' &&
    r.expected_checks.return_window === true,
)!;
const dirs: string[] = [];
let embedded: DemoJson;
let kafka: DemoJson;

const demo = async (env: NodeJS.ProcessEnv): Promise<DemoJson> => {
  const dir = mkdtempSync(join(tmpdir(), 'passk-demo-dist-'));
  dirs.push(dir);
  const run = await passk(['--data-dir', dir, 'demo', '--no-serve', '--json'], { env, timeoutMs: 280_000 });
  if (run.code !== 0) throw new Error(`passk demo exited ${run.code}\n${run.stderr}`);
  return JSON.parse(run.stdout) as DemoJson;
};

beforeAll(async () => {
  embedded = await demo({ PASSK_BACKEND: 'embedded' });
  kafka = await demo({
    PASSK_BACKEND: 'kafka',
    KAFKA_BROKERS: inject('kafkaBrokers'),
    SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
    CLICKHOUSE_URL: '',
  });
}, 600_000);

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('passk demo on Kafka', () => {
  it('ran on Kafka, in topics of its own, with the embedded store', () => {
    expect(embedded.backend).toEqual({ log: 'embedded', store: 'chdb' });
    expect(kafka.backend).toMatchObject({
      log: 'kafka',
      store: 'chdb',
      namespace: expect.stringMatching(/^passk-demo-[0-9a-z]+\.$/),
    });
  });

  it('gives both versions the same numbers as the embedded run', () => {
    expect(kafka.numbers.map((n) => n.agent_version)).toEqual(['prompt-v1', 'prompt-v2']);
    expect(kafka.numbers).toEqual(embedded.numbers);
    expect(kafka.became_stable_correct).toEqual(embedded.became_stable_correct);
    expect(kafka.events.trials).toBe(embedded.events.trials);
  });

  it('confirms the planted must-not-break regression, and its gate fails naming it', () => {
    expect(kafka.lost_stable_correct).toEqual(embedded.lost_stable_correct);
    expect(kafka.lost_stable_correct).toContain(planted.row_id);
    expect(kafka.regressions).toEqual(embedded.regressions);
    expect(kafka.regressions.find((r) => r.row_id === planted.row_id)).toMatchObject({
      must_not_break: true,
      outcome: 'confirmed_regression',
      first_divergent_check: 'proof_of_purchase',
    });
    expect(kafka.gate.verdict).toBe('fail');
    expect(kafka.gate.reasons.filter((r) => !r.passed).flatMap((r) => r.rows)).toEqual([planted.row_id]);
    // the same comparison and the same decision; the processors' GateEvaluated ids differ (each run's own clock)
    expect(kafka.gate.gate_id).toBe(embedded.gate.gate_id);
    const same = (g: DemoJson['gate']) => ({
      ...g,
      event_id: '',
      confirmation: g.confirmation && { ...g.confirmation, event_id: '' },
    });
    expect(same(kafka.gate)).toEqual(same(embedded.gate));
    expect(kafka.gate.event_id).toMatch(/^[0-9A-Z]{26}$/);
  });

  it('turns the confirmed production failure into a must-not-break row the next gate picks up', () => {
    expect(kafka.production).toMatchObject({
      requests: embedded.production.requests,
      sampled: embedded.production.sampled,
    });
    expect(kafka.production.confirmed_failure.row_id).toBe(embedded.production.confirmed_failure.row_id);
    expect(kafka.next_gate?.verdict).toBe('pass');
    expect(kafka.next_gate?.picked_up).toEqual(embedded.next_gate?.picked_up);
    expect(kafka.next_gate?.picked_up).toMatchObject({ baseline: 'stable_wrong', candidate: 'stable_correct' });
  });
});
