import { execFileSync } from 'node:child_process';
import { statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Mounts a tmpfs of `size` (`3m`, `40m`) on `dir`, made if missing, for the disk-full tests (root only). Returns why
 * it could not, for `ctx.skip`, or undefined once it is mounted; the caller unmounts it (`umount`) when done.
 */
export const mountTmpfs = (dir: string, size: string): string | undefined => {
  try {
    execFileSync('mkdir', ['-p', dir]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `cannot mount a tmpfs here (needs root and mount): ${(e as Error).message.split('\n')[0]}`;
  }
};

/** Fills the file system of `at` up to `leave` bytes free, with one file (returned, to delete). */
export const fill = (at: string, leave: number): string => {
  const fs = statfsSync(at);
  const filler = join(at, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, fs.bavail * fs.bsize - leave)));
  return filler;
};
