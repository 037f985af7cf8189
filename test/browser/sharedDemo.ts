import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passk } from './processes.ts';

type Run = Awaited<ReturnType<typeof passk>>;

/**
 * The directory of one vitest run's shared demo: named after the vitest process (the parent of every test file's
 * worker, `process.ppid` there, `process.pid` in its global setup) and, where /proc tells it, that process's start
 * time, so that a reused pid never finds an older run's directory.
 */
export const sharedDemoDir = (vitestPid: number): string => {
  let started = '';
  try {
    // field 22 of /proc/<pid>/stat, counted after the command name (which may hold spaces) ends with ')'
    started = `-${readFileSync(`/proc/${vitestPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]}`;
  } catch {
    // no /proc: the pid alone
  }
  return join(tmpdir(), `passk-shared-demo-${vitestPid}${started}`);
};

/**
 * `passk demo --no-serve --json`, run once per vitest run for the browser files that start from its data (demo,
 * explorer and review each ran it into a directory of their own: about 4.6 s of CPU and 15-60 s of a loaded lane
 * each), then copied (`cp -a` of the closed log and store, as the README commands' test copies a prepared store) into
 * `into`, which the file serves and changes as before: each file still has a data directory of its own. The first file
 * to ask runs it in sharedDemoDir (test/setup/sharedDemo.ts removes it when the run ends); the others wait for its
 * outcome. Returns that one run's outcome (exit code, output, wall time) as `passk(…)` does; the data is copied only
 * when it exited 0.
 */
export const sharedDemo = async (into: string): Promise<Run> => {
  const shared = sharedDemoDir(process.ppid);
  const outcome = join(shared, 'run.json');
  let mine = false;
  try {
    mkdirSync(shared);
    mine = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  if (mine) {
    const run: Run = await passk(['--data-dir', join(shared, 'data'), 'demo', '--no-serve', '--json']).catch(
      (e: unknown) => ({ code: null, stdout: '', stderr: `passk demo did not start: ${String(e)}`, ms: 0 }),
    );
    writeFileSync(`${outcome}.tmp`, JSON.stringify(run));
    renameSync(`${outcome}.tmp`, outcome);
  }
  // a hang guard, not a speed limit: the demo took up to a minute beside the other lanes
  for (const until = Date.now() + 280_000; !existsSync(outcome);) {
    if (Date.now() > until) throw new Error(`the shared demo in ${shared} gave no outcome in 280 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const run = JSON.parse(readFileSync(outcome, 'utf8')) as Run;
  if (run.code === 0)
    await new Promise<void>((resolve, reject) =>
      execFile('cp', ['-a', `${join(shared, 'data')}/.`, into], (err, _out, stderr) =>
        err ? reject(new Error(`cp -a: ${stderr}`)) : resolve(),
      ),
    );
  return run;
};
