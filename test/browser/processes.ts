import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Runs the passk command the way a user does (bin/passk.mjs), as a child process. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * Where the browser tests put the screenshots docs/dashboard.md shows: .reports/screenshots (never the source tree),
 * or the directory PASSK_SCREENSHOTS names: `PASSK_SCREENSHOTS=docs/img npx vitest run --project browser` refreshes
 * the documentation's.
 */
export const SCREENSHOTS = resolve(ROOT, process.env.PASSK_SCREENSHOTS || join('.reports', 'screenshots'));
const BIN = join(ROOT, 'bin', 'passk.mjs');
/**
 * The environment a child passk gets: this process's, without its `COLUMNS` (the output's width would depend on the
 * terminal the tests were started from: a test that wants one sets it, or `--width`), then the test's own.
 */
const childEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, COLUMNS: undefined, ...env });

export const passk = (
  args: readonly string[],
  opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> =>
  new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: childEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });

/** Starts a long-running passk command and resolves with the first stdout line that `ready` accepts. */
export const passkServer = (
  args: readonly string[],
  ready: (line: string) => string | undefined,
  timeoutMs = 120_000,
  env: NodeJS.ProcessEnv = {},
  /** Another passk than this checkout's (an installed package's bin), run in `cwd` with exactly `env`. */
  installed?: { bin: string; cwd: string },
): Promise<{ child: ChildProcess; value: string; stop: () => Promise<void> }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [installed?.bin ?? BIN, ...args], {
      cwd: installed?.cwd ?? ROOT,
      env: installed ? env : childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`passk ${args.join(' ')} was not ready after ${timeoutMs} ms\n${err}`));
    }, timeoutMs);
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      for (const line of out.split('\n')) {
        const value = ready(line);
        if (value === undefined) continue;
        clearTimeout(timer);
        const stop = () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('close', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
          });
        resolve({ child, value, stop });
        return;
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`passk ${args.join(' ')} exited with ${code} before it was ready\n${err}`));
    });
  });
