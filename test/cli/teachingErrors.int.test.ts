import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk, ROOT } from '../browser/processes.ts';

/**
 * Errors that teach the fix: each names what is wrong and says what to do, with exit 2 and no stack trace.
 * Run as a user runs them (bin/passk.mjs in a child process), on an embedded data directory of their own.
 */
let dir: string;
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'passk-errors-')));
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => busy.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const noStack = (stderr: string) => expect(stderr).not.toMatch(/^\s+at /m);

describe('errors that teach the fix', () => {
  it('serve on a port in use names the port and suggests --port', async () => {
    const r = await passk(['--data-dir', join(dir, 'serve'), 'serve', '--no-process', '--port', String(busyPort)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`port ${busyPort} on 127.0.0.1 is already in use`);
    expect(r.stderr).toContain('--port 0');
    noStack(r.stderr);
  });

  it('a missing file is "no such file", with the directory it was looked for in', async () => {
    const r = await passk(['report', 'no-such-trials.jsonl'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no-such-trials.jsonl: no such file (looked in ${dir})`);
    expect(r.stdout).toBe('');
    const g = await passk(
      [
        'gate',
        '--baseline',
        'v1',
        '--candidate',
        'v2',
        '--must-not-break',
        'gone.txt',
        join(ROOT, 'examples', 'refunds-v1-v2.jsonl'),
      ],
      { cwd: dir },
    );
    expect(g.code).toBe(2);
    expect(g.stderr).toContain(`gone.txt: no such must-not-break file (looked in ${dir})`);
    noStack(r.stderr + g.stderr);
  });

  it('an unknown dataset names the datasets there are and how to publish the one asked for', async () => {
    const data = join(dir, 'datasets');
    const pub = await passk([
      '--data-dir',
      data,
      'dataset',
      'publish',
      join(ROOT, 'examples', 'refund-agent', 'refunds.jsonl'),
      '--dataset',
      'refunds',
    ]);
    expect(pub.code, pub.stderr).toBe(0);
    const r = await passk(['--data-dir', data, 'dataset', 'versions', '--dataset', 'refund']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no dataset "refund" on the event log (datasets there: refunds)');
    // a command to run as printed: npx passk, with the data directory this one was given
    expect(r.stderr).toContain(`npx passk --data-dir ${data} dataset publish FILE --dataset refund`);
    noStack(r.stderr);
  });
});
