import { readFileSync, statSync } from 'node:fs';

/**
 * Whether chDB's `<store>/status` file is locked now, by whom, as the kernel says it.
 *
 * chDB (ClickHouse's StatusFile) takes an exclusive `flock` on that file while the store is open and writes its pid
 * into it; a clean close removes the file, but a crash (SIGKILL) leaves it with the old pid and no lock. That pid may
 * since belong to any unrelated process, so the file's pid alone says nothing: only a lock on the file does.
 * On Linux `/proc/locks` lists every lock as `N: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF` (the
 * device numbers in hex, the pid 0 when the holder is in another pid namespace).
 *
 * - `locked`: a lock on this very file (same device and inode); `pid` is the holder's when it is visible here.
 * - `free`: `/proc/locks` was read and lists no lock on it (or there is no status file).
 * - `unknown`: no `/proc/locks` (macOS, a /proc-less container): the caller must not guess from the pid.
 */
export type StatusLock = { state: 'locked'; pid?: number } | { state: 'free' } | { state: 'unknown' };

const LOCK_LINE = /^\d+:\s+(?:FLOCK|POSIX|OFDLCK)\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/i;

/** glibc's `major()`/`minor()` of a `st_dev` (Node's `stat().dev`). */
const majorMinor = (dev: bigint): [bigint, bigint] => [
  ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn),
  (dev & 0xffn) | ((dev >> 12n) & ~0xffn),
];

/** Reads `/proc/locks` (or `locksText`, for a test) for a lock on `file`. */
export const statusFileLock = (file: string, locksText?: string): StatusLock => {
  let locks: string;
  try {
    locks = locksText ?? readFileSync('/proc/locks', 'utf8');
  } catch {
    return { state: 'unknown' };
  }
  let st;
  try {
    st = statSync(file, { bigint: true });
  } catch {
    return { state: 'free' };
  }
  const [major, minor] = majorMinor(st.dev);
  for (const line of locks.split('\n')) {
    const m = LOCK_LINE.exec(line);
    if (!m || BigInt(m[4]!) !== st.ino) continue;
    if (BigInt(`0x${m[2]!}`) !== major || BigInt(`0x${m[3]!}`) !== minor) continue;
    const pid = Number(m[1]);
    return pid > 0 ? { state: 'locked', pid } : { state: 'locked' };
  }
  return { state: 'free' };
};
