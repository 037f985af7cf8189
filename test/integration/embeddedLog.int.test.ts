import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { eventLogContract } from '../contracts/eventLog.contract.ts';

const maxEventBytes = 100_000;

// the same contract with appends on the main thread and from the writer thread (`appendInThread`)
for (const [name, appendInThread] of [
  ['embedded (SQLite WAL)', false],
  ['embedded (SQLite WAL), appends from the writer thread', true],
] as const)
  eventLogContract(name, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-log-'));
    return {
      maxEventBytes,
      partitions: 4,
      open: async () =>
        createEmbeddedEventLog({
          dataDir,
          maxEventBytes,
          partitions: 4,
          appendInThread,
          consumer: { pollMs: 20, heartbeatMs: 200, sessionMs: 2_000 },
        }),
      dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  });

describe('the embedded log appending from its writer thread', () => {
  it('turns the event loop while a publish commits, and resolves only once another connection reads the records', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-log-'));
    const log = createEmbeddedEventLog({ dataDir, appendInThread: true });
    const count = () => {
      const db = new Database(join(dataDir, 'log.sqlite'), { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM records WHERE topic = ?').get(TOPICS.trials) as { n: number }).n;
      } finally {
        db.close();
      }
    };
    try {
      for (let round = 1; round <= 3; round++) {
        // on the main thread the append ran synchronously inside publish: it resolved before any macrotask
        let turned = false;
        setImmediate(() => (turned = true));
        const records = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: Buffer.from(`r${round}-${i}`) }));
        await log.publisher.publishRaw(TOPICS.trials, records);
        expect(turned).toBe(true);
        expect(count()).toBe(round * 50);
      }
    } finally {
      await log.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
