import { vi } from 'vitest';
import { createMemoryLog, type MemoryLog } from '../helpers/memoryLog.ts';
import { eventLogContract } from './eventLog.contract.ts';

// The in-memory log the topology unit tests use passes the same contract as the real adapters
// (test/integration/embeddedLog.int.test.ts, kafkaLog.kafka.test.ts). Its memory is its storage: a
// closed log ends its consumers, and opening it again is a restart over what it holds.
vi.setConfig({ testTimeout: 60_000 });

const maxEventBytes = 100_000;

eventLogContract('in-memory (unit tests)', async () => {
  let log: MemoryLog | undefined;
  return {
    maxEventBytes,
    partitions: 4,
    open: async () => (log ??= createMemoryLog({ partitions: 4, maxEventBytes })),
  };
});
