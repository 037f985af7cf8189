import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { eventLogContract } from '../contracts/eventLog.contract.ts';

const maxEventBytes = 100_000;

eventLogContract('embedded (SQLite WAL)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-log-'));
  return {
    maxEventBytes,
    partitions: 4,
    open: async () =>
      createEmbeddedEventLog({
        dataDir,
        maxEventBytes,
        partitions: 4,
        consumer: { pollMs: 20, heartbeatMs: 200, sessionMs: 2_000 },
      }),
    dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});
