import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Runs the race (runnerRace.testkit.ts) in a child: its stdout, or undefined when it was still held after `ms`. */
const race = (mode: 'fixed' | 'unfixed', ms: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'runnerRace.testkit.ts'), mode],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? out : undefined);
    });
  });

describe('the kafkajs Runner fix (a consumer stopped while its fetchers are replaced)', () => {
  it('kafkajs 2.2.4 as shipped holds the event loop for good: the race is real and staged', async () => {
    expect(await race('unfixed', 15_000)).toBeUndefined();
  }, 30_000);

  it('with the fix every stop returns and the event loop runs on', async () => {
    expect(await race('fixed', 15_000)).toBe('ok\n');
  }, 30_000);
});
