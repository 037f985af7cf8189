import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk, ROOT } from '../browser/processes.ts';

/**
 * import, sample and review --confirm record events that `passk process` folds. While a live `passk process` (or
 * `passk serve`) owns the data directory's store (its owner file, deploy/storeOwner.ts), they say that it folds them,
 * and do not suggest a second `process --until-caught-up`, which would only fail on the store's lock (issue 32, item
 * 4). Before, all three suggested it whatever held the store. The owner here is a file naming a live process this
 * test started: what the commands read, without the seconds a real `passk process` takes to start.
 */
let dir: string;
let holder: ChildProcess;

const nextLines = (out: string): string[] =>
  out
    .replace(/ \\\n\s+/g, ' ')
    .split('\n')
    .filter((l) => l.startsWith('next: '));

const own = (data: string, folding?: boolean) => {
  mkdirSync(data, { recursive: true });
  writeFileSync(
    join(data, 'store.owner.json'),
    JSON.stringify({
      pid: holder.pid,
      command: folding === false ? 'serve' : 'process',
      started_at: Date.now(),
      url: 'http://127.0.0.1:9',
      token: 't',
      ...(folding === undefined ? {} : { folding }),
    }),
  );
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-folded-'));
  holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
});
afterAll(() => {
  holder.kill();
  rmSync(dir, { recursive: true, force: true });
});

const run = async (data: string, args: readonly string[]) => {
  const r = await passk(['--data-dir', data, ...args], { env: { NO_COLOR: '1' } });
  expect(r.code, r.stderr).toBe(0);
  return nextLines(r.stdout);
};

describe('next commands while a passk process owns the store', () => {
  it('import, sample and review --confirm say the running processor folds what they recorded', async () => {
    const data = join(dir, 'live');
    own(data);
    const held = `the running passk process (pid ${holder.pid})`;
    expect(await run(data, ['import', join(ROOT, 'examples', 'refunds-v1-v2.jsonl')])).toEqual([
      `next: npx passk --data-dir ${data} report --from-store  # ${held} picks these trials up`,
    ]);
    expect(await run(data, ['sample', join(ROOT, 'examples', 'traces.jsonl')])).toEqual([
      `next: npx passk --data-dir ${data} review  # ${held} picks these traces up`,
    ]);
    const confirm = [
      'review',
      '--confirm',
      'tr-0000',
      '--expected',
      'deny',
      '--dataset',
      'refunds',
      '--reviewer',
      'ana',
    ];
    expect(await run(data, confirm)).toEqual([
      `next: npx passk --data-dir ${data} dataset versions --dataset refunds  # ${held} picks this confirmation up`,
    ]);
  });

  it('a serve --no-process holds the store without folding: stop it first, not a second process that fails', async () => {
    const data = join(dir, 'reader');
    own(data, false);
    const [line, ...rest] = await run(data, ['import', join(ROOT, 'examples', 'refunds-v1-v2.jsonl')]);
    expect(rest).toEqual([]);
    expect(line).toContain(`report --from-store  # the running passk serve (pid ${holder.pid}) holds the store`);
    expect(line).toContain('stop it, then run');
  });

  it('with no owner, the processor to run comes first', async () => {
    const data = join(dir, 'none');
    expect(await run(data, ['import', join(ROOT, 'examples', 'refunds-v1-v2.jsonl')])).toEqual([
      `next: npx passk --data-dir ${data} process --until-caught-up`,
      `next: npx passk --data-dir ${data} report --from-store`,
    ]);
  });
});
