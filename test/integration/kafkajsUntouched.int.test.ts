import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * kafkajs's fix (log/kafka/kafkajsFixes.ts) is applied by the Kafka backend when it creates its clients, never by an
 * import: a host application that imports passk, or records on the embedded backend, keeps kafkajs as it installed
 * it. Run in a child so that nothing else of the test process has touched kafkajs first. The built package is
 * checked the same way by test/package/tarball.int.test.ts.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'passk-kafkajs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(join(root, 'index.ts'))});
const Runner = require('kafkajs/src/consumer/runner.js');
const shipped = Runner.prototype.fetch;
const state = () => ({ shipped: Runner.prototype.fetch === shipped, fixed: Runner.prototype.passkFixed === true });
const out = {};
const passk = await import(${JSON.stringify(join(root, 'index.ts'))});
out.imported = state();
const recorder = await passk.createRecorder({ backend: { backend: 'embedded', dataDir: ${JSON.stringify(dir)} } });
await recorder.recordTrial({ suite: 's', dataset_version: 'v1', row_id: 'r', run_id: 'x', attempt: 0, passed: true, agent: { version: 'a' } });
await recorder.close();
out.embedded = state();
const { Kafka, logLevel } = await import('kafkajs');
const { createKafkaEventLog } = await import(${JSON.stringify(join(root, 'log/index.ts'))});
const kafka = new Kafka({ brokers: ['127.0.0.1:9'], logLevel: logLevel.NOTHING, connectionTimeout: 100, retry: { retries: 0 } });
await createKafkaEventLog({ kafka, registry: {} }).then(() => { out.opened = true; }, () => {});
out.kafka = state();
console.log(JSON.stringify(out));
`;

describe("kafkajs's fix", () => {
  it('is not applied by importing passk nor by the embedded backend, only by opening a Kafka event log', () => {
    const out = JSON.parse(
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: root,
        encoding: 'utf8',
      }),
    );
    expect(out).toEqual({
      imported: { shipped: true, fixed: false },
      embedded: { shipped: true, fixed: false },
      // no broker answers on port 9: the log does not open, but the backend applied the fix before its first client
      kafka: { shipped: false, fixed: true },
    });
  });
});
