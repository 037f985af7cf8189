import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { statusFileLock } from '../sinks/clickhouse/statusLock.ts';

/**
 * Who holds the embedded store: `<dataDir>/store.owner.json`, written by `passk serve` / `passk process`
 * when they open it, removed when they close it. It names the process and its local HTTP API (with
 * the token that API wants), so other commands read through it instead of failing on chDB's lock.
 * The file is readable by its user only.
 */
export const StoreOwner = z.object({
  pid: z.number().int(),
  command: z.string(),
  started_at: z.number(),
  url: z.string(),
  token: z.string(),
  /** Whether it runs the processors (folds what is recorded): `serve --no-process` does not. Absent: it does. */
  folding: z.boolean().optional(),
});
export type StoreOwner = z.infer<typeof StoreOwner>;

const ownerFile = (dataDir: string) => join(dataDir, 'store.owner.json');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const newLocalToken = (): string => randomBytes(24).toString('hex');

/** The live owner of the embedded store in `dataDir`, if a live process says it holds it. */
export const readStoreOwner = (dataDir: string): StoreOwner | undefined => {
  try {
    const owner = StoreOwner.parse(JSON.parse(readFileSync(ownerFile(dataDir), 'utf8')));
    return owner.pid !== process.pid && alive(owner.pid) ? owner : undefined;
  } catch {
    return undefined;
  }
};

/** Records this process as the store's owner; the returned function removes the record (if still ours). */
export const claimStoreOwner = (dataDir: string, owner: Omit<StoreOwner, 'pid' | 'started_at'>): (() => void) => {
  const file = ownerFile(dataDir);
  writeFileSync(file, JSON.stringify({ ...owner, pid: process.pid, started_at: Date.now() }), { mode: 0o600 });
  return () => {
    try {
      const now = StoreOwner.parse(JSON.parse(readFileSync(file, 'utf8')));
      if (now.pid === process.pid) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
};

export const describeOwner = (o: StoreOwner): string =>
  `passk ${o.command} (pid ${o.pid}, since ${new Date(o.started_at).toISOString()}, local API ${o.url})`;

/**
 * Who else holds the data directory's embedded store, if anyone: the owner file's process, else the
 * process holding chDB's lock on `<dataDir>/store/status` (sinks/clickhouse/statusLock.ts). Where the lock cannot be
 * read (no /proc/locks), the live pid chDB wrote to that file: a pid left by a crash may be reused, but wiping a held
 * store is the worse mistake. A description, for refusing to wipe it.
 */
export const storeHolder = (dataDir: string): string | undefined => {
  const owner = readStoreOwner(dataDir);
  if (owner) return describeOwner(owner);
  const status = join(dataDir, 'store', 'status');
  const lock = statusFileLock(status);
  if (lock.state === 'free') return undefined;
  if (lock.state === 'locked')
    return lock.pid === process.pid
      ? undefined
      : lock.pid === undefined
        ? 'a process in another pid namespace'
        : `process ${lock.pid}`;
  try {
    const pid = Number(/^PID:\s*(\d+)/m.exec(readFileSync(status, 'utf8'))?.[1]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) return `process ${pid}`;
  } catch {
    // no store there
  }
  return undefined;
};
