import { describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { failureRowId } from '../../processors/core/datasets.ts';
import { createMemoryLog, type MemoryLog } from '../helpers/memoryLog.ts';
import { comparison, datasetRow, failureConfirmed, runOf } from '../helpers/feedbackLoop.ts';
import { T0, trace } from '../helpers/processorFixtures.ts';

const config = PasskConfig.parse({ dataDir: '/nonexistent' });
const drain = async (log: MemoryLog) =>
  (await startProcessors(config, { log, store: false, untilCaughtUp: true, maxWaitMs: 1 })).done;
const eventsOf = async (log: MemoryLog, topic: (typeof TOPICS)[keyof typeof TOPICS]): Promise<PasskEvent[]> =>
  Promise.all(
    log
      .records(topic)
      .flat()
      .map((r) => jsonCodec.decode(r.value)),
  );

describe('the feedback loop through the processors (in-memory log)', () => {
  it('a confirmed production failure becomes a must-not-break row, and the next gate refuses a candidate that fails it', async () => {
    const log = createMemoryLog();
    const ROWS = ['r1', 'r2', 'r3'];
    await log.publisher.publish(ROWS.map((r) => datasetRow('d1', r)));
    // 1. a reviewer confirms a production failure
    await log.publisher.publish([failureConfirmed('t42')]);
    await drain(log);
    // 2. a must-not-break row appears in a new dataset version
    const upserts = (await eventsOf(log, TOPICS.datasets)).filter(
      (e) => e.type === 'DatasetRowUpserted' && e.provenance.kind === 'production_failure',
    );
    expect(upserts).toHaveLength(1);
    expect(upserts[0]).toMatchObject({
      dataset_version: 'd1.pf1',
      row_id: failureRowId('t42'),
      tags: expect.arrayContaining(['must_not_break']),
    });
    // 3. the fixed baseline passes every row of the new version; the candidate fails the new row
    const rows = [...ROWS, failureRowId('t42')];
    await log.publisher.publish([
      ...runOf('fixed', 'd1.pf1', rows),
      ...runOf('cand', 'd1.pf1', rows, { fails: [failureRowId('t42')] }),
    ]);
    await log.publisher.publish([
      comparison('gate-1', 'd1.pf1', 'fixed', 'cand', { confirmation_attempts: 0 }),
      comparison('gate-2', 'd1.pf1', 'fixed', 'fixed', { confirmation_attempts: 0 }),
    ]);
    await drain(log);
    const verdicts = (await eventsOf(log, TOPICS.decisions)).filter((e) => e.type === 'GateEvaluated');
    expect(verdicts.map((v) => [v.gate_id, v.verdict])).toEqual(
      expect.arrayContaining([
        ['gate-1', 'fail'],
        ['gate-2', 'pass'],
      ]),
    );
    const refused = verdicts.find((v) => v.gate_id === 'gate-1')!;
    expect(refused.reasons.find((r) => !r.passed)).toMatchObject({
      rule: 'must_not_break_stable_correct',
      rows: [failureRowId('t42')],
    });
    expect(refused.evidence.find((e) => e.row_id === failureRowId('t42'))!.candidate_attempts).toHaveLength(3);
    // processing again decides nothing new: verdicts are made once
    await drain(log);
    expect((await eventsOf(log, TOPICS.decisions)).filter((e) => e.type === 'GateEvaluated')).toHaveLength(
      verdicts.length,
    );
  });
});

describe('production windows through the processors (in-memory log)', () => {
  it('raises one alert when a window’s weighted pass rate falls significantly below offline pass@1', async () => {
    const log = createMemoryLog();
    const H = 3_600_000;
    // offline: agent v1 passes 9 of 10 rows every time
    const rows = Array.from({ length: 10 }, (_, i) => `r${i}`);
    await log.publisher.publish(runOf('v1', 'd1', rows, { fails: ['r0'] }));
    // production, hour 1: half the sampled traces fail; later traces on every partition close the window
    const t0 = T0 + H;
    await log.publisher.publish(
      Array.from({ length: 240 }, (_, i) =>
        trace({ at: t0 + i * 1000, version: 'v1', fingerprint: `in-${i}`, probability: 0.5, passed: i % 2 === 0 }),
      ),
    );
    await log.publisher.publish(
      Array.from({ length: 40 }, (_, i) =>
        trace({ at: t0 + 3 * H, version: 'v1', fingerprint: `tick-${i}`, passed: true }),
      ),
    );
    await drain(log);
    const alerts = (await eventsOf(log, TOPICS.decisions)).filter((e) => e.type === 'WindowAlertRaised');
    const hourly = alerts.filter(
      (a) => a.type === 'WindowAlertRaised' && a.window.size_ms === H && a.window.start === t0,
    );
    expect(hourly).toHaveLength(1);
    expect(hourly[0]).toMatchObject({
      agent_version: 'v1',
      sampled: 240,
      weight: 480,
      pass_rate: 0.5,
      offline_pass_at_1: 0.9,
    });
    await drain(log);
    expect((await eventsOf(log, TOPICS.decisions)).filter((e) => e.type === 'WindowAlertRaised')).toHaveLength(
      alerts.length,
    );
  });
});
