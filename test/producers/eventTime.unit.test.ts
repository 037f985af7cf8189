import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTrialRecord } from '../../producers/files/trialLines.ts';
import { buildEvents } from '../../producers/ingest/ingest.ts';
import { sampleFile } from '../../producers/sampler/sampleFile.ts';
import { createMemoryPublisher } from '../../producers/sdk/memoryPublisher.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import type { TraceSampled, TrialRecorded } from '../../schemas/events/index.ts';

/**
 * Issue 26, item 4: a missing `occurred_at` is the time the event was received, on every live path (passk sample,
 * the ingest API's trials and traces, the SDK); never 1970, which the trace retention drops at once. The event id
 * never depends on it: the same trace or trial sent again is a duplicate.
 */
const NOW = Date.UTC(2026, 11, 5, 3, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'passk-event-time-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sample = async (lines: object[], now?: number) => {
  const file = join(dir, `t${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  const publisher = createMemoryPublisher();
  const recorder = createRecorder({ publisher });
  await sampleFile(file, { policy: { rate: 1 }, recorder, ...(now === undefined ? {} : { now }) });
  await recorder.close();
  return publisher.events as TraceSampled[];
};
const eventOf = (b: Awaited<ReturnType<typeof buildEvents>>[number]) =>
  'event' in b ? b.event : expect.fail(`refused: ${JSON.stringify(b)}`);
const trace = { trace_id: 't1', agent_version: 'v1', input: 'where is my order?' };
const flat = {
  suite: 's',
  dataset_version: 'd1',
  row_id: 'r1',
  agent_version: 'v1',
  run_id: 'run-1',
  attempt: 0,
  passed: true,
};

describe('an event without occurred_at is dated when received', () => {
  it('passk sample: the time the file is read; a given time is kept; the id is the same on every read', async () => {
    const [a] = await sample([trace], NOW);
    expect(a!.occurred_at).toBe(NOW);
    const before = Date.now();
    const [b] = await sample([trace]);
    expect(b!.occurred_at).toBeGreaterThanOrEqual(before);
    expect(b!.event_id).toBe(a!.event_id);
    const [c] = await sample([{ ...trace, occurred_at: NOW - 5_000 }], NOW);
    expect(c!.occurred_at).toBe(NOW - 5_000);
  });

  it('passk sample under a cap: timed and untimed lines are all kept, each with its time', async () => {
    const file = join(dir, 'capped.jsonl');
    writeFileSync(
      file,
      [
        { ...trace, trace_id: 'old', occurred_at: NOW - 86_400_000 },
        { ...trace, trace_id: 'new' },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    const publisher = createMemoryPublisher();
    const recorder = createRecorder({ publisher });
    await sampleFile(file, { policy: { rate: 1, cap: { max: 10, windowMs: 3_600_000 } }, recorder, now: NOW });
    await recorder.close();
    const events = publisher.events as TraceSampled[];
    expect(Object.fromEntries(events.map((e) => [e.trace_id, e.occurred_at]))).toEqual({
      old: NOW - 86_400_000,
      new: NOW,
    });
  });

  it('the ingest API: a trial without occurred_at is dated when received, with the id a file gives it', async () => {
    const [built] = await buildEvents('trials', [{ index: 0, value: flat }], undefined, () => NOW);
    const trial = eventOf(built!) as TrialRecorded;
    expect(trial.occurred_at).toBe(NOW);
    expect(trial.event_id).toBe(parseTrialRecord(flat, { file: 'f', line: 1 }).event_id);
    const [given] = await buildEvents(
      'trials',
      [{ index: 0, value: { ...flat, occurred_at: 7 } }],
      undefined,
      () => NOW,
    );
    expect((eventOf(given!) as TrialRecorded).occurred_at).toBe(7);
  });

  it('the ingest API and the SDK: a trace or a trial without occurred_at is dated by the clock', async () => {
    const before = Date.now();
    const [built] = await buildEvents('traces', [
      {
        index: 0,
        value: {
          trace_id: 't1',
          agent_version: 'v1',
          segment: 's',
          input_fingerprint: 'fp',
          sampling: { policy: 'p', probability: 1 },
          payload: {},
        },
      },
    ]);
    expect((eventOf(built!) as TraceSampled).occurred_at).toBeGreaterThanOrEqual(before);
    const publisher = createMemoryPublisher();
    const recorder = createRecorder({ publisher, clock: () => NOW });
    const { agent_version: _, ...identity } = flat;
    await recorder.recordTrial({ ...identity, agent: { version: 'v1' } });
    await recorder.close();
    expect(publisher.events.map((e) => e.occurred_at)).toEqual([NOW]);
  });
});
