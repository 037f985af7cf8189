import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { EventPublisher } from '../../processors/ports.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The real embedded log, with each publish call's `trusted` noted. */
const logged = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'passk-trusted-'));
  dirs.push(dir);
  const log = await createEmbeddedEventLog({ dataDir: dir });
  const calls: (boolean | undefined)[] = [];
  const publisher: EventPublisher = {
    ...log.publisher,
    publish: (events, opts) => (calls.push(opts?.trusted), log.publisher.publish(events, opts)),
  };
  return { log, publisher, calls };
};

const trace = (input: string) => ({
  trace_id: 't-1',
  agent_version: 'v1',
  segment: 'default',
  input_fingerprint: 'fp-1',
  occurred_at: 1_764_000_000_000,
  payload: { input },
  sampling: { policy: 'p@1', probability: 1 },
});

describe('the recorder publishes what its schema parsed as trusted', () => {
  it('a well-formed event is published trusted', async () => {
    const { log, publisher, calls } = await logged();
    const rec = createRecorder({ publisher, maxWaitMs: 0 });
    await rec.recordTrace(trace('refund order 7'));
    await rec.close();
    expect(calls).toEqual([true]);
    await log.close();
  });

  it('an event holding a lone surrogate is left to the log, which refuses it as before', async () => {
    const { log, publisher, calls } = await logged();
    const rec = createRecorder({ publisher, maxWaitMs: 0, onError: () => undefined });
    const receipt = rec.recordTrace(trace('refund \ud800 order'));
    await expect(receipt).rejects.toBeInstanceOf(InvalidEvent);
    await expect(receipt).rejects.toThrow(/payload\.input: holds a lone UTF-16 surrogate/);
    expect(calls[0]).toBeUndefined();
    await rec.close();
    await log.close();
  });
});
