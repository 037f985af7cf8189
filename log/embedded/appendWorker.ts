/**
 * The embedded log's writer thread (appendThread.ts): its own connection to `<dataDir>/log.sqlite`, appending the
 * records the main thread sends, one `BEGIN IMMEDIATE` transaction (and, under `synchronous = FULL`, one fsync) per
 * message, in the order they came, and answering each once its transaction committed (or with the error it failed
 * with, its SQLite code kept).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { partitionOf } from '../partitioner.ts';
import type { DeadLetterRecord } from '../deadLetters.ts';
import { openLogDatabase, type Synchronous } from './database.ts';
import { createLogStore, type AppendRecord } from './store.ts';

export interface WriterData {
  readonly dataDir: string;
  readonly synchronous: Synchronous;
  readonly busyTimeoutMs: number;
  readonly partitions: number;
}
export type WriterRequest =
  | { readonly id: number; readonly kind: 'append'; readonly records: AppendRecord[] }
  | { readonly id: number; readonly kind: 'deadLetters'; readonly letters: DeadLetterRecord[] }
  | { readonly id: number; readonly kind: 'close' };
export type WriterAnswer =
  | { readonly id: number; readonly ok: true; readonly result: number }
  | { readonly id: number; readonly ok: false; readonly error: { message: string; name: string; code?: string } };

const data = workerData as WriterData;
const port = parentPort!;
let store: ReturnType<typeof createLogStore> | undefined;
let db: ReturnType<typeof openLogDatabase> | undefined;
const open = () => {
  if (store) return store;
  db = openLogDatabase({ dataDir: data.dataDir, synchronous: data.synchronous, busyTimeoutMs: data.busyTimeoutMs });
  return (store = createLogStore(db, { defaultPartitions: data.partitions, now: Date.now }));
};

port.on('message', (m: WriterRequest) => {
  try {
    if (m.kind === 'close') {
      db?.close();
      port.postMessage({ id: m.id, ok: true, result: 0 } satisfies WriterAnswer);
      port.close();
      return;
    }
    const s = open();
    const result =
      m.kind === 'append' ? s.append(m.records, partitionOf).length : s.appendDeadLetters(m.letters, partitionOf);
    port.postMessage({ id: m.id, ok: true, result } satisfies WriterAnswer);
  } catch (e) {
    const err = e as { message?: unknown; name?: unknown; code?: unknown };
    port.postMessage({
      id: m.id,
      ok: false,
      error: {
        message: typeof err.message === 'string' ? err.message : String(e),
        name: typeof err.name === 'string' ? err.name : 'Error',
        ...(typeof err.code === 'string' ? { code: err.code } : {}),
      },
    } satisfies WriterAnswer);
  }
});
