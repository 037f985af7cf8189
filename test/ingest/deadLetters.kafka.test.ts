import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createKafkaEventLog, createRegistryClient } from '../../log/index.ts';
import { passk, passkServer } from '../browser/processes.ts';

/**
 * The Kafka side of deadLetters.int.test.ts: `passk ingest` on Kafka + schema registry (the test stack, in topics of
 * its own) dead-letters a refused span once however often the exporter re-sends it, redacted, in the namespace's
 * `passk.dlq`; `passk process` (consuming from the broker into the embedded store) brings it to `passk check`.
 */
const TOKEN = 'dead-letters-kafka-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'passk-ingest-dlq-kafka-'));
const data = join(dir, 'data');
const namespace = `passk-ingest-dlq-${randomBytes(4).toString('hex')}.`;
const brokers = inject('kafkaBrokers');
const env = {
  PASSK_BACKEND: 'kafka',
  KAFKA_BROKERS: brokers,
  SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
  PASSK_KAFKA_NAMESPACE: namespace,
  CLICKHOUSE_URL: '',
};
const kafka = new Kafka({ clientId: 'passk-test', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = kafka.admin();
  await admin.connect();
  const mine = (await admin.listTopics()).filter((t) => t.startsWith(namespace));
  if (mine.length > 0) await admin.deleteTopics({ topics: mine }).catch(() => {});
  await admin.disconnect();
});

const urlOf = (line: string) => (line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined);
const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const span = (trace: string, id: string, attributes: object[]) => ({
  traceId: trace.repeat(32),
  spanId: id.repeat(16),
  name: 'span',
  startTimeUnixNano: '1767225600000000000',
  endTimeUnixNano: '1767225601000000000',
  attributes,
});

describe('passk ingest on Kafka dead-letters what it refuses', () => {
  it('appends a refused span to passk.dlq once, redacted, and passk check lists it after passk process', async () => {
    const ingest = await passkServer(
      ['--data-dir', data, 'ingest', '--port', '0', '--token', TOKEN, '--json'],
      urlOf,
      120_000,
      env,
    );
    let stderr = '';
    ingest.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    // a plain HTTP root (no LLM convention) whose attribute holds an email, and a GenAI span: 1 refused, 1 kept
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [str('service.name', 'refunds')] },
          scopeSpans: [
            {
              spans: [
                span('a', '1', [str('http.route', '/refund'), str('user.email', 'jane.doe@example.com')]),
                span('b', '2', [
                  str('gen_ai.operation.name', 'chat'),
                  str('gen_ai.input.messages', '[{"role":"user","content":"hi"}]'),
                ]),
              ],
            },
          ],
        },
      ],
    });
    try {
      // the exporter's first try and two retries of the same request
      for (let i = 0; i < 3; i++) {
        const r = await fetch(new URL('/v1/traces', ingest.value), {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
          body,
        });
        expect(r.status).toBe(200);
        expect(((await r.json()) as { partialSuccess?: object }).partialSuccess).toMatchObject({ rejectedSpans: '1' });
      }
    } finally {
      await ingest.stop();
    }
    expect(stderr.match(/OTLP: refused 1 \(no_convention\)/g)).toHaveLength(3);

    // the namespace's passk.dlq holds it once, redacted, with its reason
    const log = await createKafkaEventLog({
      kafka,
      registry: createRegistryClient({ url: env.SCHEMA_REGISTRY_URL }),
      namespace,
    });
    const letters = await log.deadLetters().finally(() => log.close());
    expect(letters.map((l) => [l.source.topic, l.source.key, l.reason.split(':')[0]])).toEqual([
      ['otlp:/v1/traces', `${'a'.repeat(32)}/${'1'.repeat(16)}`, 'no_convention'],
    ]);
    const text = Buffer.from(letters[0]!.value).toString('utf8');
    expect(text).not.toContain('jane.doe@example.com');
    expect(text).toContain('[EMAIL]');

    const processed = await passk(['--data-dir', data, 'process', '--until-caught-up'], { env, timeoutMs: 180_000 });
    expect(processed.code, processed.stderr).toBe(0);
    const check = await passk(['--data-dir', data, 'check', '--json'], { env });
    const report = JSON.parse(check.stdout) as { dead_letters: { total: number; by_stage: Record<string, number> } };
    expect(report.dead_letters).toMatchObject({ total: 1, by_stage: { ingest: 1 } });
  });
});
