import { describe, expect, it } from 'vitest';
import type { EventPublisher } from '../../processors/ports.ts';
import { BackendUnavailable, EventTooLarge, PipelineError } from '../../schemas/errors.ts';
import type { PasskEvent, TrialRecorded } from '../../schemas/events/index.ts';
import { eventIdTime } from '../../schemas/ids.ts';
import { Backpressure, UnsentEvents } from './errors.ts';
import { newRunId, runTime, trialEventId } from './ids.ts';
import { InvalidRecord, type TrialInput } from './inputs.ts';
import { createMemoryPublisher } from './memoryPublisher.ts';
import { createRecorder } from './recorder.ts';

const noWait = { retries: 3, initialMs: 0, factor: 2, maxMs: 0 };

const trial = (over: Partial<TrialInput> = {}): TrialInput => ({
  suite: 'refunds',
  dataset_version: 'v1',
  row_id: 'r1',
  run_id: 'run-1',
  attempt: 0,
  agent: { version: 'prompt-v2' },
  passed: true,
  ...over,
});

/** A publisher that fails the first `failures` calls with `error`, then delegates. */
const flaky = (failures: number, error: () => Error) => {
  const inner = createMemoryPublisher();
  let calls = 0;
  const publisher: EventPublisher & { calls: () => number } = {
    ...inner,
    calls: () => calls,
    async publish(events) {
      calls++;
      if (calls <= failures) throw error();
      await inner.publish(events);
    },
  };
  return { publisher, events: inner.events };
};

describe('createRecorder', () => {
  it('publishes a valid trial with a deterministic id from its identity', async () => {
    const publisher = createMemoryPublisher();
    const rec = createRecorder({ publisher, clock: () => 1_764_000_000_000 });
    const id = await rec.recordTrial(trial());
    expect(publisher.events).toHaveLength(1);
    const e = publisher.events[0] as TrialRecorded;
    expect(e).toMatchObject({
      type: 'TrialRecorded',
      event_id: id,
      occurred_at: 1_764_000_000_000,
      producer: 'passk-sdk/0.1.0',
    });
    expect(id).toBe(
      trialEventId({
        suite: 'refunds',
        dataset_version: 'v1',
        agent: { version: 'prompt-v2' },
        run_id: 'run-1',
        row_id: 'r1',
        attempt: 0,
      }),
    );
    await rec.close();
  });

  it('gives a re-run of the same attempt the same id, whatever the clock says', async () => {
    const a = createMemoryPublisher();
    const b = createMemoryPublisher();
    const runId = newRunId(1_700_000_000_000);
    await createRecorder({ publisher: a, clock: () => 1 }).recordTrial(trial({ run_id: runId }));
    await createRecorder({ publisher: b, clock: () => 999_999 }).recordTrial(trial({ run_id: runId }));
    expect(a.events[0]!.event_id).toBe(b.events[0]!.event_id);
    expect(eventIdTime(a.events[0]!.event_id)).toBe(1_700_000_000_000);
    expect(runTime(runId)).toBe(1_700_000_000_000);
  });

  it('refuses invalid input synchronously, naming every failing field, and sends nothing', () => {
    const publisher = createMemoryPublisher();
    const rec = createRecorder({ publisher });
    let error: unknown;
    try {
      void rec.recordTrial(trial({ attempt: -1, row_id: '' }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRecord);
    expect((error as InvalidRecord).issues.map((i) => i.field).sort()).toEqual(['attempt', 'row_id']);
    expect(() => rec.recordTrial({ ...trial(), passd: true } as unknown as TrialInput)).toThrow(/passd/);
    expect(() => rec.recordTrial(null as unknown as TrialInput)).toThrow(InvalidRecord);
    expect(rec.pending).toBe(0);
    expect(publisher.events).toHaveLength(0);
  });

  it('batches: 1,000 trials go out in publish calls of at most maxBatch', async () => {
    const publisher = createMemoryPublisher();
    const sizes: number[] = [];
    const counting: EventPublisher = { ...publisher, publish: (ev) => (sizes.push(ev.length), publisher.publish(ev)) };
    const rec = createRecorder({ publisher: counting, maxBatch: 100, maxWaitMs: 10_000 });
    for (let i = 0; i < 1000; i++) void rec.recordTrial(trial({ row_id: `r${i}` }));
    await rec.flush();
    expect(publisher.events).toHaveLength(1000);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100);
    expect(new Set(publisher.events.map((e) => e.event_id)).size).toBe(1000);
    await rec.close();
  });

  it('sends a partial batch after maxWaitMs without a flush', async () => {
    const publisher = createMemoryPublisher();
    const rec = createRecorder({ publisher, maxBatch: 100, maxWaitMs: 5 });
    const id = await rec.recordTrial(trial());
    expect(publisher.events.map((e) => e.event_id)).toEqual([id]);
  });

  it('retries errors that say a retry can help, then succeeds', async () => {
    const { publisher, events } = flaky(2, () => new BackendUnavailable('broker down'));
    const rec = createRecorder({ publisher, retry: noWait });
    await rec.recordTrial(trial());
    expect(events).toHaveLength(1);
    expect(rec.stats.retries).toBe(2);
  });

  it('does not retry an error that is not retriable, and keeps the events for the next flush', async () => {
    const { publisher, events } = flaky(1, () => new PipelineError('auth refused', { retriable: false }));
    const rec = createRecorder({ publisher, retry: noWait, maxWaitMs: 10_000 });
    void rec.recordTrial(trial());
    await expect(rec.flush()).rejects.toThrow(/auth refused/);
    expect(publisher.calls()).toBe(1);
    expect(rec.pending).toBe(1);
    await rec.flush();
    expect(events).toHaveLength(1);
  });

  it('close() after an outage hands back every unsent event, losing nothing', async () => {
    const { publisher } = flaky(Infinity, () => new BackendUnavailable('down'));
    const rec = createRecorder({ publisher, retry: noWait, maxWaitMs: 10_000 });
    const receipts = [0, 1, 2].map((i) => rec.recordTrial(trial({ attempt: i })));
    const error = await rec.close().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsentEvents);
    expect((error as UnsentEvents).events.map((e) => (e as TrialRecorded).attempt)).toEqual([0, 1, 2]);
    for (const r of receipts) await expect(r).rejects.toBeInstanceOf(UnsentEvents);
    expect(() => rec.recordTrial(trial())).toThrow(/closed/);
  });

  it('isolates an event the backend refuses for its size, and sends the rest of its batch', async () => {
    const publisher = createMemoryPublisher({ maxEventBytes: 2_000 });
    const errors: unknown[] = [];
    const rec = createRecorder({ publisher, maxWaitMs: 10_000, onError: (e) => errors.push(e) });
    const receipts = [0, 1, 2, 3, 4].map((i) =>
      rec.recordTrial(trial({ attempt: i, output: i === 3 ? 'x'.repeat(5_000) : 'ok' })),
    );
    await rec.flush();
    expect(publisher.events.map((e) => (e as TrialRecorded).attempt)).toEqual([0, 1, 2, 4]);
    await expect(receipts[3]).rejects.toBeInstanceOf(EventTooLarge);
    expect(errors).toHaveLength(1);
    expect(rec.stats.refused).toBe(1);
  });

  it('pushes back instead of growing without bound', () => {
    const rec = createRecorder({
      publisher: createMemoryPublisher(),
      maxBuffered: 3,
      maxBatch: 100,
      maxWaitMs: 10_000,
    });
    for (let i = 0; i < 3; i++) void rec.recordTrial(trial({ attempt: i }));
    expect(() => rec.recordTrial(trial({ attempt: 3 }))).toThrow(Backpressure);
  });

  it('records judgments and labels, and refuses a judgment without a rubric version', async () => {
    const publisher = createMemoryPublisher();
    const rec = createRecorder({ publisher });
    await rec.recordJudgment({
      item_id: 'i1',
      judge: { id: 'j', version: '3' },
      rubric_version: 'r2',
      kind: 'pointwise',
      label: 'pass',
      score: 1,
    });
    await rec.recordLabel({ item_id: 'i1', labeler: 'ana', label: 'pass' });
    expect(publisher.events.map((e) => e.type)).toEqual(['JudgmentRecorded', 'LabelRecorded']);
    expect(() => rec.recordJudgment({ item_id: 'i1', judge: { id: 'j' }, kind: 'pointwise' } as never)).toThrow(
      /rubric_version/,
    );
  });

  it('markRunFinished infers the run from its trials and flushes everything', async () => {
    const publisher = createMemoryPublisher();
    const rec = createRecorder({ publisher, maxWaitMs: 10_000 });
    void rec.recordTrial(trial({ row_id: 'a', attempt: 0 }));
    void rec.recordTrial(trial({ row_id: 'a', attempt: 1, passed: null, error_kind: 'timeout' }));
    void rec.recordTrial(trial({ row_id: 'b', attempt: 0 }));
    await rec.markRunFinished({ run_id: 'run-1', k: 2 });
    const last = publisher.events.at(-1) as PasskEvent & { type: 'RunFinished' };
    expect(publisher.events).toHaveLength(4);
    expect(last).toMatchObject({
      type: 'RunFinished',
      suite: 'refunds',
      trials: 3,
      ungraded: 1,
      rows: 2,
      k: 2,
      status: 'completed',
    });
    await expect(createRecorder({ publisher }).markRunFinished({ run_id: 'unknown' })).rejects.toThrow(/suite/);
  });
});
