import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import type { EventLog } from '../../processors/ports.ts';
import { expectEvictingDecidesAsNeverEvicting, expectEvictionTurnedOffDecides } from '../helpers/gateEvictPhases.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';

/**
 * Issue 26, item 6, through the gates topology on the memory log of the unit tests and the embedded SQLite log
 * (test/helpers/gateEvictPhases.ts; gateEvict.kafka.test.ts on Kafka): a comparison naming a version a verdict
 * evicted waits for its reload from passk.rowstate and decides, by the end of the same phase, what the gates that
 * never evict decide, also across a restart.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const backends: Record<string, () => { log: EventLog; reopen?: () => EventLog }> = {
  memory: () => ({ log: createMemoryLog({ partitions: 3 }) }),
  embedded: () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-evict-'));
    dirs.push(dir);
    const open = () =>
      createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL', partitions: 3, consumer: { pollMs: 5 } });
    return { log: open(), reopen: open };
  },
};

describe.each(Object.keys(backends))('gates that evict row tables (%s log)', (backend) => {
  it('reload an evicted version before a later comparison names it, and decide as gates that never evict', async () => {
    await expectEvictingDecidesAsNeverEvicting(backends[backend]!);
  });
  it('restarted with eviction off, reload the closed runs a snapshot left out and decide as gates that never evict', async () => {
    await expectEvictionTurnedOffDecides(backends[backend]!);
  });
});
