import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk, ROOT } from '../browser/processes.ts';
import { agentAnswering } from '../helpers/cli.ts';

/**
 * The commands the CLI suggests run as printed, outside the passk repository (issue 32, item 6): `npx passk …`, with
 * the data directory the printing command was given. Here `npx passk` stands for the installed bin (`node
 * bin/passk.mjs`: npx would look the name up in the registry from a directory that has not installed it); everything
 * after it is run exactly as printed, in the directory it was printed in. Before, `import` printed `next: passk
 * process --until-caught-up, then passk report --from-store`: a bare `passk` (command not found there), two commands
 * on one line, and no `--data-dir`, so the report would have read another store.
 */
let dir: string;
const BIN = join(ROOT, 'bin', 'passk.mjs');

/** The commands of `next:` lines (continuations joined), with `npx passk` made the checkout's bin. */
const nextCommands = (out: string): string[] =>
  out
    .replace(/ \\\n\s+/g, ' ')
    .split('\n')
    .flatMap((l) => (l.startsWith('next: ') ? [l.slice('next: '.length)] : []));
const runAsPrinted = (command: string): string => {
  expect(command).toMatch(/^npx passk /);
  return execFileSync(
    'bash',
    ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${command.slice(10)}`],
    {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: undefined },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-suggested-'));
  const trials = [0, 1, 2].flatMap((attempt) =>
    ['r1', 'r2'].map((row_id) =>
      JSON.stringify({
        suite: 's',
        dataset_version: 'd1',
        row_id,
        agent_version: 'v1',
        run_id: 'run-1',
        attempt,
        passed: true,
      }),
    ),
  );
  writeFileSync(join(dir, 'trials.jsonl'), trials.join('\n') + '\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a suggested command, run as printed', () => {
  it("import's next commands process and report the trials it recorded, in its data directory", async () => {
    const r = await passk(['--data-dir', 'elsewhere/data', 'import', 'trials.jsonl'], {
      cwd: dir,
      env: { NO_COLOR: '1', COLUMNS: '80' },
    });
    expect(r.code, r.stderr).toBe(0);
    const commands = nextCommands(r.stdout);
    expect(commands).toEqual([
      'npx passk --data-dir elsewhere/data process --until-caught-up',
      'npx passk --data-dir elsewhere/data report --from-store',
    ]);
    runAsPrinted(commands[0]!);
    expect(runAsPrinted(commands[1]!)).toContain('6 trials');
  });

  it('while passk process runs (the live gate setup), run says it picks the trials up, and a second process says why it cannot start in one message of 80 columns', async () => {
    // a trial's report: before, run suggested `process --until-caught-up`, which exited 3 after chDB's raw 161-column
    // "Code: 76. DB::Exception: Cannot lock file …" line and "use its HTTP API" (passk process offers none to a user)
    const data = join(dir, 'live');
    const processors = spawn(process.execPath, [BIN, '--data-dir', data, 'process'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: undefined },
      stdio: 'ignore',
    });
    try {
      // it owns the store once its owner file is there (deploy/storeOwner.ts)
      while (!existsSync(join(data, 'store.owner.json'))) {
        expect(processors.exitCode).toBeNull();
        await sleep(200);
      }
      writeFileSync(join(dir, 'rows.jsonl'), '{"id":"r1","input":"a","expected":"ok"}\n');
      const run = await passk(
        ['--data-dir', data, 'run', '--dataset', 'rows.jsonl', '--agent', agentAnswering('ok'), '--k', '1'],
        { cwd: dir, env: { NO_COLOR: '1' } },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(
        run.stdout
          .trimEnd()
          .split('\n')
          .filter((l) => l.startsWith('next: ')),
      ).toEqual([
        `next: npx passk --data-dir ${data} report --from-store  # the running passk process (pid ${processors.pid}) picks these trials up`,
      ]);
      const second = await passk(['--data-dir', data, 'process', '--until-caught-up'], {
        cwd: dir,
        env: { NO_COLOR: '1' },
      });
      expect(second.code).toBe(3);
      const said = second.stderr.split('\n').filter((l) => !l.startsWith('passk process: starting'));
      expect(said.join('\n')).not.toMatch(/DB::Exception|HTTP API/);
      expect(said.filter((l) => [...l].length > 80)).toEqual([]);
      const message = said.join(' ').replace(/\s+/g, ' ');
      expect(message).toContain(
        `passk: the store in ${data} is held by passk process (pid ${processors.pid}), which is already folding the trials recorded there: wait for it`,
      );
      expect(message).toContain(`npx passk --data-dir ${data} report --from-store`);
      // the command it names works while the processor runs (through its local API)
      expect(runAsPrinted(`npx passk --data-dir ${data} report --from-store`)).toContain('trial');
    } finally {
      processors.kill('SIGTERM');
      await new Promise((done) => (processors.exitCode !== null ? done(null) : processors.once('close', done)));
    }
  });
});
