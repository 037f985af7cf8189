import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryPublisher, createRecorder, InvalidRecord, newRunId } from './index.ts';
import { createEmbeddedEventLog } from './log/embedded/embeddedLog.ts';
import { readLog } from './producers/logReader.ts';
import { TOPICS } from './schemas/topics.ts';

describe('the package main export', () => {
  it('createRecorder({ backend }) opens the embedded log, and close() flushes and closes it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-sdk-'));
    try {
      const recorder = await createRecorder({ backend: { backend: 'embedded', dataDir } });
      const run_id = newRunId();
      for (let attempt = 0; attempt < 3; attempt++)
        void recorder.recordTrial({
          suite: 'refunds',
          dataset_version: 'v1',
          row_id: 'r17',
          run_id,
          attempt,
          agent: { version: 'p2' },
          passed: attempt !== 1,
        });
      expect(() => recorder.recordTrial({ suite: 'refunds' } as never)).toThrow(InvalidRecord);
      await recorder.markRunFinished({ run_id });
      await recorder.close();
      const log = createEmbeddedEventLog({ dataDir });
      const types: string[] = [];
      await readLog(log, { topics: [TOPICS.trials] }, (e) => types.push(e.event.type));
      await log.close();
      expect(types.sort()).toEqual(['RunFinished', 'TrialRecorded', 'TrialRecorded', 'TrialRecorded']);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('createRecorder({ publisher }) publishes through the given publisher', async () => {
    const publisher = createMemoryPublisher();
    const recorder = await createRecorder({ publisher });
    await recorder.recordLabel({ item_id: 'i', labeler: 'ana', label: 'pass' });
    await recorder.close();
    expect(publisher.events.map((e) => e.type)).toEqual(['LabelRecorded']);
  });
});
