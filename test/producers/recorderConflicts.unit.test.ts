import { describe, expect, it } from 'vitest';
import { InvalidRecord } from '../../producers/sdk/inputs.ts';
import { createMemoryPublisher } from '../../producers/sdk/memoryPublisher.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';

const base = {
  suite: 's',
  dataset_version: 'd1',
  row_id: 'r1',
  run_id: 'run-1',
  attempt: 0,
  agent: { version: 'v1' },
  passed: true,
  occurred_at: 1_767_225_600_000,
};

describe('the recorder keeps one answer per trial identity (issue 26, item 3)', () => {
  it('refuses the same attempt with another verdict or event id, naming the field and both ids; a re-send is a duplicate', async () => {
    const publisher = createMemoryPublisher();
    const recorder = createRecorder({ publisher, clock: () => base.occurred_at + 5 });
    const id = await recorder.recordTrial(base);
    // the same trial again (even without its time, dated when recorded) is the same event, counted once in its run
    const { occurred_at: _at, ...undated } = base;
    expect(await recorder.recordTrial(undated)).toBe(id);
    const refusal = (input: object) => {
      try {
        void recorder.recordTrial(input as typeof base);
      } catch (e) {
        return e;
      }
      throw new Error('not refused');
    };
    const verdict = refusal({ ...base, passed: false });
    expect(verdict).toBeInstanceOf(InvalidRecord);
    expect((verdict as InvalidRecord).issues[0]).toMatchObject({ field: 'passed' });
    expect((verdict as InvalidRecord).message).toContain(`was recorded as event ${id}; this one, event ${id}`);
    const other = '01KBZZZZZZZZZZZZZZZZZZZZZZ';
    const otherId = refusal({ ...base, event_id: other });
    expect((otherId as InvalidRecord).issues[0]).toMatchObject({ field: 'event_id' });
    expect((otherId as InvalidRecord).message).toContain(`was recorded as event ${id}; this one, event ${other}`);
    // another attempt of the same row is a new identity
    await recorder.recordTrial({ ...base, attempt: 1, passed: false });
    await recorder.markRunFinished({ run_id: 'run-1' });
    await recorder.close();
    const trials = publisher.events.filter((e) => e.type === 'TrialRecorded');
    expect(trials.map((t) => t.event_id).filter((e) => e === other)).toEqual([]);
    expect(trials.every((t) => t.type === 'TrialRecorded' && (t.attempt === 1 || t.passed === true))).toBe(true);
    const finished = publisher.events.find((e): e is RunFinished => e.type === 'RunFinished')!;
    expect(finished.trials).toBe(2);
  });
});
