/**
 * Appends to the embedded log from a writer thread (appendWorker.ts), so the process's event loop goes on decoding
 * and sampling the next request while SQLite commits (and, under `synchronous = FULL`, fsyncs) the last one (issue
 * #25: the commit was a tenth of the OTLP receiver's time, most of it waiting for the disk). Each call resolves only
 * once its own transaction committed, so whoever acknowledges after it acknowledges only what is durable, as before;
 * calls are appended in the order they were made (one thread, one queue).
 */
import { Worker } from 'node:worker_threads';
import { BackendUnavailable } from '../../schemas/errors.ts';
import type { DeadLetterRecord } from '../deadLetters.ts';
import type { AppendRecord } from './store.ts';
import type { WriterAnswer, WriterData, WriterRequest } from './appendWorker.ts';

type Call = { [K in WriterRequest['kind']]: Omit<Extract<WriterRequest, { kind: K }>, 'id'> }[WriterRequest['kind']];

export interface AppendThread {
  append(records: AppendRecord[]): Promise<number>;
  appendDeadLetters(letters: DeadLetterRecord[]): Promise<number>;
  /** Waits for the calls made, then closes the thread's connection and stops it. */
  close(): Promise<void>;
}

/** The writer's error as the main thread's append would have thrown it: the message, name and SQLite code kept. */
const errorOf = (e: { message: string; name: string; code?: string }): Error =>
  Object.assign(new Error(e.message), { name: e.name, ...(e.code === undefined ? {} : { code: e.code }) });

export const startAppendThread = (data: WriterData): AppendThread => {
  const typescript = import.meta.url.endsWith('.ts');
  const module = new URL(typescript ? './appendWorker.ts' : './appendWorker.js', import.meta.url).href;
  let worker: Worker | undefined;
  const pending = new Map<number, { resolve: (n: number) => void; reject: (e: unknown) => void }>();
  let seq = 0;

  /** A stopped thread fails what it had not answered (its transactions committed or not: a retry is safe, idempotent keys). */
  const stopped = (w: Worker, why: string) => {
    if (worker !== w) return;
    worker = undefined;
    const calls = [...pending.values()];
    pending.clear();
    for (const c of calls) c.reject(new BackendUnavailable(`the embedded log's writer thread stopped (${why})`));
  };
  const start = (): Worker => {
    const w = new Worker(new URL('./appendWorker.mjs', import.meta.url), {
      workerData: { ...data, module, typescript },
    });
    w.on('message', (m: WriterAnswer) => {
      const c = pending.get(m.id);
      if (!c) return;
      pending.delete(m.id);
      if (pending.size === 0) w.unref();
      if (m.ok) c.resolve(m.result);
      else c.reject(errorOf(m.error));
    });
    w.on('error', (e) => stopped(w, e.message));
    w.on('exit', (code) => stopped(w, `exit code ${code}`));
    w.unref();
    return w;
  };
  const call = (request: Call): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      worker ??= start();
      const id = ++seq;
      pending.set(id, { resolve, reject });
      worker.ref(); // an unanswered append keeps the process alive
      worker.postMessage({ ...request, id });
    });

  // started now: its start (loading the writer module, opening the file) is the process's, not the first append's
  worker = start();
  return {
    append: (records) => call({ kind: 'append', records }),
    appendDeadLetters: (letters) => call({ kind: 'deadLetters', letters }),
    close: async () => {
      const w = worker;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      await call({ kind: 'close' });
      w.ref(); // unref'd once idle: held until it has exited
      await exited;
    },
  };
};
