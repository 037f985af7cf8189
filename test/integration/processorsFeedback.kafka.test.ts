import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { openStore } from '../../deploy/store.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS, type Topic } from '../../schemas/topics.ts';
import type { EventLog } from '../../processors/ports.ts';
import { failureRowId } from '../../processors/core/datasets.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import { datasetRows, gateHistory } from '../../sinks/clickhouse/index.ts';
import { comparison, datasetRow, failureConfirmed, runOf } from '../helpers/feedbackLoop.ts';
import { embeddedBackend, kafkaBackend, type ProcessorsBackend } from '../helpers/processorsHarness.ts';

const backends: ProcessorsBackend[] = [
  embeddedBackend,
  kafkaBackend(inject('kafkaBrokers'), inject('schemaRegistryUrl')),
];
const disposers: (() => void)[] = [];
afterAll(() => disposers.forEach((d) => d()));

const read = async (log: EventLog, topic: Topic): Promise<PasskEvent[]> => {
  const out: PasskEvent[] = [];
  await readToEnd(log, { topic, groupId: `read-${randomBytes(4).toString('hex')}`, onEvent: (e) => void out.push(e) });
  return out;
};

describe.each(backends)('the feedback loop end to end on the $name', (backend) => {
  it('production failure confirmed → must-not-break row in a new dataset version → a candidate failing it is refused by the next gate', async () => {
    const env = backend.fresh();
    disposers.push(env.dispose);
    const log = await env.open();
    const config = PasskConfig.parse({ backend: 'embedded', dataDir: env.child.dataDir });
    const drain = async () =>
      (await startProcessors(config, { log, store: true, untilCaughtUp: true, maxWaitMs: 20 })).done;
    const ROWS = ['r1', 'r2', 'r3', 'r4'];
    await log.publisher.publish([...ROWS.map((r) => datasetRow('2026-11', r)), failureConfirmed('trace-77')]);
    await drain();

    // the confirmed failure is a must-not-break row of a new dataset version, in the log and in the store
    const fresh = (await read(log, TOPICS.datasets)).filter(
      (e) => e.type === 'DatasetRowUpserted' && e.provenance.kind === 'production_failure',
    );
    expect(fresh).toMatchObject([
      {
        dataset_version: '2026-11.pf1',
        row_id: failureRowId('trace-77'),
        expected: 'deny',
        provenance: { trace_id: 'trace-77' },
      },
    ]);

    // the fixed version gets every row of the new version right; the candidate breaks the new row
    const rows = [...ROWS, failureRowId('trace-77')];
    await log.publisher.publish([
      ...runOf('v2-fixed', '2026-11.pf1', rows),
      ...runOf('v3-candidate', '2026-11.pf1', rows, { fails: [failureRowId('trace-77')] }),
      comparison('release-v3', '2026-11.pf1', 'v2-fixed', 'v3-candidate', { confirmation_attempts: 0 }),
    ]);
    await drain();

    const verdicts = (await read(log, TOPICS.decisions)).filter((e) => e.type === 'GateEvaluated');
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ gate_id: 'release-v3', verdict: 'fail', candidate: 'v3-candidate' });
    expect(verdicts[0]!.type === 'GateEvaluated' && verdicts[0]!.reasons.find((r) => !r.passed)).toMatchObject({
      rule: 'must_not_break_stable_correct',
      rows: [failureRowId('trace-77')],
    });

    const store = await openStore(config);
    try {
      const history = await gateHistory(store.client, { candidate: 'v3-candidate' });
      expect(history.map((h) => [h.gate_id, h.verdict])).toEqual([['release-v3', 'fail']]);
      const mnb = await datasetRows(store.client, {
        dataset_id: 'refunds-ds',
        dataset_version: '2026-11.pf1',
        mustNotBreakOnly: true,
      });
      expect(mnb.map((r) => [r.row_id, r.provenance.trace_id])).toEqual([[failureRowId('trace-77'), 'trace-77']]);
    } finally {
      await store.close();
      await log.close();
    }
  }, 400_000);
});
