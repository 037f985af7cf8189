import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CommanderError, type Command } from 'commander';
import { buildProgram } from '../../cli/program.ts';
import { withMigratedStore } from '../helpers/migratedStore.ts';
import { startJudge, startRefundAgent, type StubServer } from '../helpers/stubServers.ts';

/**
 * Every command in the README's ```bash blocks and in every command's `--help` examples, run.
 *
 * How a command is run (the same for all, so a new README line or help example needs nothing here):
 *   - through bash, in a scratch directory holding `examples/` and `test/` of the repository and the files the help
 *     examples name (FILES below), with `passk` on PATH as `node bin/passk.mjs`; `npx passk` becomes `passk` (npx in a
 *     directory outside the package would look the name up in the registry);
 *   - `npm install && …` runs what follows: `npm install` is how this suite got here, and deploy/test/fresh-clone.sh
 *     runs the README's two commands verbatim, `npm install` included, in a fresh clone;
 *   - with a PASSK_DATA_DIR of its own (so nothing touches ./.passk) and NO_COLOR=1: a fresh one, or for a command
 *     with commands to run before it, a copy of the directory those commands left (run once for all that list them);
 *     a fresh one holds a copy of a migrated empty store (test/helpers/migratedStore.ts: a new store's migrations are
 *     ~1.3 s of CPU in each command that opens it), but for `passk migrate` and `passk demo`, which start from none;
 *   - beside the others, a few at a time (a command that names `--data-dir` waits for the last one naming the same);
 *   - `KAFKA_BROKERS=…` and `SCHEMA_REGISTRY_URL=…` point at this suite's own Kafka stack (test/setup/stack.ts);
 *   - by default it must exit 0. Anything else is an entry in HANDLING, keyed by the command as written, with its
 *     reason: another exit code, a server that is started, checked and stopped, a daemon, commands to run before it,
 *     a local stand-in for the service it names (an HTTP agent, an OpenAI-compatible judge: test/helpers/stubServers),
 *     or — only for what needs a service this repository cannot start — skipped with the reason (vitest's skip:
 *     counted and listed apart by `npm test`), and run when the variable that provides the service is set.
 * A command that matches no entry and fails, fails this test: add an entry (or fix the command).
 * The --help texts are rendered in this process by the CLI's own program (helpText), checked against the CLI's once.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'passk.mjs');

/** A local stand-in for a service the command names: started for the command, `replace` swapped for its URL. */
type Stub = { start: () => Promise<StubServer>; replace: string };

type Handling =
  | { kind: 'exit'; code?: number; before?: string[]; stdout?: RegExp; stub?: Stub; why?: string }
  /** A server: started, its URL (the first http:// on a `ready` line) fetched, then SIGTERM; `--port 0` is appended. */
  | { kind: 'serve'; ready: RegExp; why: string }
  /**
   * Runs until stopped: started (and, with `ready`, once it printed a line matching it), still running after `ms`,
   * then SIGTERM, after which it must exit cleanly.
   */
  | { kind: 'daemon'; ms: number; ready?: RegExp; why: string }
  /** Skipped, with its reason, where it cannot run; `unless` names the variable that makes it runnable. */
  | { kind: 'not-here'; why: string; unless?: 'CLICKHOUSE_URL' };

/** Two versions of dataset refunds in the store: `rows-v2.jsonl` (FILES) adds a must-not-break row to `rows.jsonl`. */
const DATASET_VERSIONS = [
  'passk dataset publish rows.jsonl --dataset refunds --version 1',
  'passk dataset publish rows-v2.jsonl --dataset refunds --version 2',
  'passk process --until-caught-up',
];

const HANDLING: Record<string, Handling> = {
  'npm install && npm test': {
    kind: 'not-here',
    why: 'it is this suite itself; deploy/test/fresh-clone.sh (run by .ci/run) runs it verbatim in a fresh clone',
  },
  'npm install && npx passk demo': {
    kind: 'serve',
    ready: /Dashboard: http/,
    why: 'the demo ends by serving the dashboard until Ctrl-C',
  },
  'npx passk demo': { kind: 'serve', ready: /Dashboard: http/, why: 'the demo ends by serving the dashboard' },
  'passk demo': { kind: 'serve', ready: /Dashboard: http/, why: 'the demo ends by serving the dashboard' },
  'passk serve': { kind: 'serve', ready: /http:\/\//, why: 'serves until stopped' },
  'passk serve --port 0 --json': { kind: 'serve', ready: /"url"/, why: 'serves until stopped' },
  'PASSK_DASHBOARD_TOKEN=$(openssl rand -hex 16) passk serve --host 0.0.0.0': {
    kind: 'serve',
    ready: /http:\/\//,
    why: 'serves until stopped (the token is required off loopback; the URL it prints carries it)',
  },
  'CLICKHOUSE_URL=http://ch:8123 passk serve --no-process': {
    kind: 'not-here',
    unless: 'CLICKHOUSE_URL',
    why: 'needs a ClickHouse server: set CLICKHOUSE_URL to run it (none runs on these machines: no Docker, and Debian packages only ClickHouse 18.16)',
  },
  'npm install --save-dev ../passk': {
    kind: 'not-here',
    why: 'installs passk into another repository: test/package/tarball.int.test.ts installs the packed tarball into a temporary repository and runs the CI recipe there',
  },
  'npm install --save-dev git+https://github.com/your-org/passk.git': {
    kind: 'not-here',
    why: 'clones from a git host (no network here); test/package/tarball.int.test.ts installs the packed tarball, which is what npm builds from a clone',
  },
  'npm install --save-dev ./passk-0.1.0.tgz': {
    kind: 'not-here',
    why: 'installs passk into another repository: test/package/tarball.int.test.ts does exactly this (npm pack, then npm install of the tarball) in a temporary repository',
  },
  'CLICKHOUSE_URL=http://clickhouse:8123 …': {
    kind: 'not-here',
    why: 'a fragment naming the ClickHouse server setting, not a command',
  },
  'PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8080/apis/ccompat/v7 CLICKHOUSE_URL=http://127.0.0.1:8123 passk demo --no-serve':
    {
      kind: 'not-here',
      unless: 'CLICKHOUSE_URL',
      why: 'needs a ClickHouse server: set CLICKHOUSE_URL to run it (the same demo on Kafka with the embedded store runs from the README line)',
    },
  'npx passk gate --baseline v1 --candidate v2 --must-not-break examples/must-not-break.txt examples/refunds-v1-v2.jsonl':
    { kind: 'exit', code: 1, stdout: /GATE FAIL/, why: 'the example candidate breaks must-not-break row r1' },
  'passk gate --baseline v1 --candidate v2 --must-not-break examples/must-not-break.txt examples/refunds-v1-v2.jsonl': {
    kind: 'exit',
    code: 1,
    stdout: /GATE FAIL/,
    why: 'the example candidate breaks must-not-break row r1',
  },
  'passk gate --baseline v1 --candidate v2 --zero-forbidden --max-pass1-drop 0.02 --pass-hat 3:0.9:critical examples/refunds-v1-v2.jsonl':
    { kind: 'exit', code: 1, why: 'the example candidate fails the gate' },
  'passk gate --baseline v1 --candidate v2 --rules gate.json --judgments judge.jsonl --json trials.jsonl > verdict.json':
    { kind: 'exit', code: 1, why: 'the example candidate fails the gate (the verdict is written all the same)' },
  'passk process': { kind: 'daemon', ms: 8_000, why: 'runs until SIGTERM' },
  'npx passk gate --from-store --baseline refund-agent-v1 --candidate refund-agent-v2': {
    kind: 'exit',
    before: [
      'npx passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent.ts --k 3',
      'npx passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent-v2.ts --k 3',
      'npx passk process --until-caught-up',
    ],
    why: 'the last of the walkthrough: the store must hold both runs (the commands above it, in order)',
  },
  'npx passk gate --declare --baseline refund-agent-v1 --candidate refund-agent-v2': {
    kind: 'exit',
    before: [
      'npx passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent.ts --adaptive --max-k 8',
    ],
    why: 'declared before the candidate runs (the adaptive walkthrough): the baseline must have run',
  },
  'npx passk report --from-store': {
    kind: 'exit',
    before: [
      'npx passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent.ts --adaptive --max-k 8',
      'npx passk process --until-caught-up',
    ],
    stdout: /adaptive run adaptive-\S+: pass@k, pass\^k, flip rate and mean/,
    why: 'the adaptive walkthrough: the store must hold the adaptive run, whose first stage the report says it uses',
  },
  'passk retract --run run-2 --reason "typo in the agent command" --dry-run': {
    kind: 'exit',
    before: ['passk import examples/refunds-v1-v2.jsonl'],
    stdout: /Would retract run run-2/,
    why: 'retracts a run the log holds: the two-version example, imported',
  },
  'passk retract --run run-2 --suite refunds --reason "wrong model" --by ana --json': {
    kind: 'exit',
    before: ['passk import examples/refunds-v1-v2.jsonl'],
    stdout: /"published": 10/,
    why: 'retracts a run the log holds: the two-version example, imported',
  },
  'passk report --from-store --suite refunds': {
    kind: 'exit',
    before: ['passk import trials.jsonl', 'passk process --until-caught-up'],
    why: 'reads what passk process put in the store',
  },
  'passk compare --baseline v1 --candidate v2 --from-store --suite refunds': {
    kind: 'exit',
    before: ['passk import trials.jsonl', 'passk process --until-caught-up'],
    why: 'reads both versions from the store that passk process fills',
  },
  'passk dataset versions --dataset refunds': {
    kind: 'exit',
    before: ['passk dataset publish rows.jsonl --dataset refunds'],
    why: 'lists the versions a publish made',
  },
  'passk run --dataset rows.jsonl --agent candidate.ts --confirmations --follow': {
    kind: 'daemon',
    ms: 8_000,
    // stopped while it still loads (seconds at a high load), `passk run` exits 143 as a shell reports it
    ready: /following confirmation requests/,
    why: 'follows confirmation requests until SIGTERM',
  },
  'PASSK_INGEST_TOKEN=$(openssl rand -hex 16) passk ingest --port 0 --json': {
    kind: 'daemon',
    ms: 8_000,
    why: 'serves the ingest API until SIGTERM',
  },
  'PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8080/apis/ccompat/v7 passk process':
    { kind: 'daemon', ms: 15_000, why: 'runs until SIGTERM (on this suite’s Kafka stack)' },
  'passk run --dataset rows.jsonl --agent http://localhost:3000/agent --k 5 --concurrency 16 --timeout 2m': {
    kind: 'exit',
    stub: { start: startRefundAgent, replace: 'http://localhost:3000' },
    why: "the user's agent on localhost:3000 is a local refund agent over HTTP here",
  },
  'passk run --dataset rows.jsonl --agent agent.ts --grader judge --rubric rubric.md --judge-url http://localhost:8000/v1 --judge-model qwen2.5':
    {
      kind: 'exit',
      stub: { start: startJudge, replace: 'http://localhost:8000' },
      why: 'the OpenAI-compatible judge on localhost:8000 is a local stand-in here (no hosted model is called in tests)',
    },
  'passk dataset export --dataset refunds --version 2 --out refunds-v2.jsonl': {
    kind: 'exit',
    before: DATASET_VERSIONS,
    why: 'exports a version the store holds: two published versions, processed into the store',
  },
  'passk dataset export --dataset refunds --version latest --must-not-break-only': {
    kind: 'exit',
    before: DATASET_VERSIONS,
    stdout: /"must_not_break":true/,
    why: 'exports a version the store holds: two published versions, processed into the store',
  },
  'passk check --suite airline --json': {
    kind: 'exit',
    before: ['passk import runs/tau-bench.jsonl', 'passk process --until-caught-up'],
    why: 'checks a suite the store must hold first',
  },
  'passk review --confirm t-81f2 --expected deny --dataset refunds --reviewer ana --note "opened item, cosmetic wear"':
    {
      kind: 'exit',
      before: ['passk sample review-traces.jsonl --rate 1'],
      why: 'confirms a trace that must have been sampled first',
    },
};

/** The files the help examples name, made in the scratch directory: name → content, or `@path` to copy from the repo. */
const FILES: Record<string, string> = {
  'trials.jsonl': '@examples/refunds-v1-v2.jsonl',
  'confirm.jsonl': '@test/fixtures/refunds-breaks-mnb.jsonl',
  'runs/tau-bench.jsonl': '@examples/public-trials/tau_bench.jsonl',
  'runs/neo-tau-bench.jsonl': '@examples/public-trials/neo_tau_bench.jsonl',
  'gate.json': '@test/fixtures/gate-rules.json',
  'judge.jsonl': '@test/fixtures/judgments.jsonl',
  'judge-labels.jsonl': '@test/fixtures/judgments.jsonl',
  'policy.json': JSON.stringify({ name: 'support', rate: 0.1, segments: { enterprise: 0.5 } }),
  'rows.jsonl': '@examples/refund-agent/refunds.jsonl',
  'rows-v2.jsonl':
    readFileSync(join(ROOT, 'examples/refund-agent/refunds.jsonl'), 'utf8') +
    `${JSON.stringify({
      id: 'r25',
      input: { order_id: 'A-0025', days_since_purchase: 3, receipt: 'no', damaged: true, amount_usd: 15 },
      expected: 'deny',
      tags: ['must_not_break'],
    })}\n`,
  'agent.ts': "export { default, meta } from './examples/refund-agent/agent.ts';\n",
  'baseline.ts': "export { default, meta } from './examples/refund-agent/agent.ts';\n",
  'candidate.ts': "export { default, meta } from './examples/refund-agent/agent-v2.ts';\n",
  'suspects.txt': 'r01\nr02\n',
  'rubric.md': 'Pass when the decision follows the refund policy.\n',
  'agent.py':
    'import json, sys\nreq = json.load(sys.stdin)\ninp = req.get("input", {})\n' +
    'ok = inp.get("days_since_purchase", 99) <= 30 and inp.get("receipt") == "yes"\n' +
    'print(json.dumps({"output": "approve" if ok else "deny"}))\n',
  'logs/inspect-ctf.json': '@test/fixtures/tool-outputs/inspect-epochs2-intercode-ctf.json',
  'review-traces.jsonl': `${JSON.stringify({
    trace_id: 't-81f2',
    agent_version: 'support-v3',
    input: { message: 'Opened item, cosmetic wear, want a refund' },
    output: 'approve',
    verdicts: [{ grader: 'policy-check', passed: false }],
    occurred_at: 1_764_547_200_000,
  })}\n`,
};

/** Commands of a Markdown text's ```bash blocks: continuation lines joined, comments and blank lines dropped. */
export const bashCommands = (markdown: string): string[] =>
  [...markdown.matchAll(/^```bash\n([\s\S]*?)^```/gm)].flatMap((m) => joinLines(m[1]!));

/** Commands of a `--help` text's "Examples:" section (indented lines up to the first blank one). */
export const helpExamples = (help: string): string[] => {
  const at = help.indexOf('\nExamples:\n');
  if (at < 0) return [];
  const lines: string[] = [];
  for (const line of help.slice(at + '\nExamples:\n'.length).split('\n')) {
    if (!line.startsWith('  ')) break;
    lines.push(line.trim());
  }
  // the help shows `npx passk …` (cli/format/helpText.ts, asRun); the commands are keyed as the sources write them
  return joinLines(lines.join('\n')).map((c) => c.replace(/(^|\s)npx passk(?=\s|$)/, '$1passk'));
};

const stripComment = (line: string): string => line.replace(/\s+#\s.*$/, '').trimEnd();
const joinLines = (text: string): string[] => {
  const out: string[] = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    const line = stripComment(raw.trim());
    if (line.endsWith('\\')) {
      cur += line.slice(0, -1).trim() + ' ';
      continue;
    }
    const cmd = (cur + line).trim();
    cur = '';
    if (cmd && !cmd.startsWith('#')) out.push(cmd.replace(/\s+/g, ' '));
  }
  return out;
};

/** Copies a closed data directory (`cp -a`: modes and times kept, as the store left them). */
const copyStore = (from: string, to: string): Promise<void> =>
  new Promise((resolve, reject) =>
    execFile('cp', ['-a', from, to], (err, _out, stderr) => (err ? reject(new Error(`cp -a: ${stderr}`)) : resolve())),
  );

/** Commands run at once by one part (see readmeSuite), and a command test's limit, its wait for a slot included. */
const SLOTS = 3;
const COMMAND_TIMEOUT = 600_000;
let free = SLOTS;
const waiting: (() => void)[] = [];
const inSlot = async <T>(f: () => Promise<T>): Promise<T> => {
  if (free > 0) free--;
  else await new Promise<void>((go) => waiting.push(go));
  try {
    return await f();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else free++;
  }
};

/** A RegExp as its source text (JSON.stringify gives `{}` for one), anything else as it is. */
const regexText = (v: unknown): unknown => (v instanceof RegExp ? String(v) : v);

/**
 * `passk ARGS --help` as the CLI prints it into a pipe (80 columns, no colours), rendered in this process through the
 * program `passk` itself builds (cli/program.ts: the same commands loaded, the same help and epilog).
 */
export const helpText = async (args: string[]): Promise<string> => {
  const program = await buildProgram([...args, '--help']);
  let out = '';
  // each command holds its own copy of the output settings (commander copies them when the command is added)
  const capture = (c: Command): void => {
    c.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80, getOutHasColors: () => false });
    c.commands.forEach(capture);
  };
  capture(program);
  try {
    await program.parseAsync(['node', 'passk', ...args, '--help']);
  } catch (e) {
    if (!(e instanceof CommanderError) || e.exitCode !== 0) throw e;
  }
  return out;
};

/** Whether a command needs the Kafka stack (it runs in readmeCommands.kafka.test.ts; every other in the .int one). */
const needsKafka = (cmd: string): boolean => /\bKAFKA_BROKERS=|\bPASSK_BACKEND=kafka\b|--backend kafka\b/.test(cmd);

/**
 * Defines the tests of one part of the commands: `local` (every command that needs no Kafka, and the checks that the
 * commands are found and HANDLING has no stale entry) or `kafka` (the rest, on the given stack).
 */
export const readmeSuite = async (
  part: 'local' | 'kafka',
  stack?: { brokers: string; registry: string },
): Promise<void> => {
  const scratch = mkdtempSync(join(tmpdir(), 'passk-readme-'));
  const shim = join(scratch, '.bin');
  const cwd = join(scratch, 'cwd');
  mkdirSync(shim);
  mkdirSync(cwd);
  // .ts agents (agent.ts, baseline.ts) are ES modules, as in the repository
  writeFileSync(join(cwd, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(shim, 'passk'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(shim, 'passk'), 0o755);
  symlinkSync(join(ROOT, 'examples'), join(cwd, 'examples'));
  symlinkSync(join(ROOT, 'test'), join(cwd, 'test'));
  for (const [name, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(cwd, name)), { recursive: true });
    if (content.startsWith('@')) cpSync(join(ROOT, content.slice(1)), join(cwd, name));
    else writeFileSync(join(cwd, name), content);
  }
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** The command as it is run (see the header): npm install dropped, npx passk → passk, Kafka → this suite's stack. */
  const asRun = (cmd: string, extra = ''): string =>
    cmd
      .replace(/^npm install && /, '')
      .replace(/\bnpx passk\b/g, 'passk')
      .replace(/\bKAFKA_BROKERS=\S+/g, `KAFKA_BROKERS=${stack?.brokers}`)
      .replace(/\bSCHEMA_REGISTRY_URL=\S+/g, `SCHEMA_REGISTRY_URL=${stack?.registry}`) + extra;

  let dirs = 0;
  const envFor = (): NodeJS.ProcessEnv & { PASSK_DATA_DIR: string } => ({
    ...process.env,
    PATH: `${shim}:${process.env.PATH}`,
    PASSK_DATA_DIR: join(scratch, `data-${++dirs}`),
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  });

  /**
   * A fresh data directory gets the migrated empty store (see the header), but for the commands about a new store
   * (`migrate`, and `demo`, which empties its directory) and those naming a data directory of their own.
   */
  const fresh = async (cmd: string, env: { PASSK_DATA_DIR: string }): Promise<void> => {
    if (!/\bpassk (migrate|demo)\b|--data-dir[ =]/.test(asRun(cmd))) await withMigratedStore(env.PASSK_DATA_DIR);
  };

  /** Runs a command to its end, without blocking this process (a local stand-in server answers meanwhile). */
  const runAsync = (cmd: string, env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(
        'bash',
        ['-c', cmd],
        { cwd, env, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      ),
    );

  /** Starts a command that does not end by itself; `ready` resolves with the first line matching `until`. */
  const start = (cmd: string, env: NodeJS.ProcessEnv, until?: RegExp) => {
    const child: ChildProcess = spawn('bash', ['-c', cmd], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const ended = new Promise<{ code: number | null; signal: string | null }>((done) =>
      child.on('close', (code, signal) => done({ code, signal })),
    );
    const ready = new Promise<string | null>((resolve) => {
      const onData = (c: Buffer) => {
        out += c.toString();
        const line = until && out.split('\n').find((l) => until.test(l));
        if (line) resolve(line);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void ended.then(() => resolve(null));
      setTimeout(() => resolve(null), 240_000).unref();
    });
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
      }
      return ended;
    };
    return { child, ready, stop, out: () => out };
  };

  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  // Every --help rendered in this process by the CLI's own program (22 spawns of the CLI were ~30 s of start-up);
  // 'the --help texts are the ones a user sees' below compares two of them with the spawned CLI's.
  const topHelp = await helpText([]);
  const commandsSection = topHelp.slice(topHelp.indexOf('\nCommands:\n')).split('\n\n')[0]!;
  const commandNames = [...commandsSection.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)]
    .map((m) => m[1]!)
    .filter((c) => c !== 'help');
  const helps = await Promise.all(commandNames.map((c) => helpText([c])));
  const sources: [string, string[]][] = [
    ['README.md', bashCommands(readme)],
    ['passk --help', helpExamples(topHelp)],
    ...commandNames.map((c, i): [string, string[]] => [`passk ${c} --help`, helpExamples(helps[i]!)]),
  ];

  if (part === 'local')
    describe('the commands are found', () => {
      it('in the README and in the --help examples of every command', () => {
        const readmeCmds = sources[0]![1];
        expect(readmeCmds).toContain('npm install && npx passk demo');
        expect(readmeCmds).toContain('npm install && npm test');
        expect(readmeCmds.length).toBeGreaterThanOrEqual(12);
        expect(commandNames).toEqual(expect.arrayContaining(['report', 'compare', 'gate', 'demo', 'serve', 'import']));
        for (const c of ['report', 'compare', 'gate', 'run', 'import', 'demo', 'serve', 'sample'])
          expect(sources.find(([s]) => s === `passk ${c} --help`)![1].length, c).toBeGreaterThan(0);
      });
      it('and the --help texts rendered here are the ones the CLI prints (passk --help, passk gate --help)', async () => {
        const printed = (args: string[]) =>
          new Promise<string>((resolve, reject) =>
            execFile(process.execPath, [BIN, ...args, '--help'], { encoding: 'utf8' }, (err, stdout) =>
              err ? reject(err) : resolve(stdout),
            ),
          );
        const [top, gate] = await Promise.all([printed([]), printed(['gate'])]);
        expect(topHelp).toBe(top);
        expect(helps[commandNames.indexOf('gate')]).toBe(gate);
      });
      it('and every entry of HANDLING names a command that exists (no stale entries)', () => {
        const all = new Set(sources.flatMap(([, cmds]) => cmds));
        expect(Object.keys(HANDLING).filter((k) => !all.has(k))).toEqual([]);
      });
    });

  // A --help without examples has no commands to run; its source still counts for the stale-entry check above.
  // The commands run side by side, SLOTS at a time (each has a data directory of its own; the servers take port 0):
  // the daemons' and servers' waits overlap with other commands' work. A test's time includes its wait for a slot.
  // Commands that name a data directory (`--data-dir ./.passk`) share it: they run one after another, in order.
  const runs = new Map<string, Promise<void>>();
  const stores = new Map<string, Promise<unknown>>();
  const byStore = (cmd: string, f: () => Promise<void>): Promise<void> => {
    const dir = /--data-dir[ =](\S+)/.exec(cmd)?.[1];
    if (!dir) return f();
    const run = (stores.get(dir) ?? Promise.resolve()).catch(() => undefined).then(f);
    stores.set(dir, run);
    return run;
  };
  for (const [source, commands] of sources.filter(([, cmds]) => cmds.length > 0)) {
    const mine = [...new Set(commands)].filter((cmd) => needsKafka(cmd) === (part === 'kafka'));
    if (mine.length === 0) continue;
    describe.concurrent(source, () => {
      for (const cmd of mine) {
        const how: Handling = HANDLING[cmd] ?? { kind: 'exit' };
        if (how.kind === 'not-here') {
          const provided = how.unless && process.env[how.unless];
          it(provided ? cmd : `${cmd} (skipped: ${how.why})`, async (ctx) => {
            if (!provided) return ctx.skip(how.why);
            const command = asRun(cmd).replace(/\bCLICKHOUSE_URL=\S+/, `CLICKHOUSE_URL=${provided}`);
            const r = await runAsync(command, envFor());
            expect(r.code, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`).toBe(0);
          });
          continue;
        }
        // The same command as run, with the same handling, runs once: `npx passk demo` in the README and `passk demo`
        // in its --help are one run (the demo is a minute or more of the file's time); each test checks its outcome.
        // A command whose output only goes to a file (`passk demo --no-serve --json > demo.json` in demo --help) is,
        // when nothing matches its output, the same run as the command without the redirect (the README's `npx passk
        // demo --no-serve --json`): one run of the two (a demo is ~7.5 s of CPU; nothing here reads demo.json).
        const handling = JSON.stringify(how, (k, v: unknown) => (k === 'why' ? undefined : regexText(v)));
        const asKeyed = how.kind === 'exit' && !how.stdout ? asRun(cmd).replace(/ > [\w./-]+$/, '') : asRun(cmd);
        const key = `${asKeyed}\n${handling}`;
        it(
          cmd,
          () => {
            let run = runs.get(key);
            if (!run) runs.set(key, (run = byStore(cmd, () => inSlot(() => check(cmd, how)))));
            return run;
          },
          COMMAND_TIMEOUT,
        );
      }
    });
  }

  /**
   * A data directory holding what `before` leaves, prepared once per list of commands (and each list from its
   * prefix: a run, then the same run and `process`) and copied for each command that needs it: the copy of a closed
   * store is the store those commands leave (`cp -a`; chDB holds its directory only while a command runs). Keyed by
   * the commands as run, so a README command that is also a list's first step (`npx passk run … --k 3`, and the same
   * run in `passk run --help`) runs once for its own test and for the list (see check).
   */
  const prepared = new Map<string, Promise<string>>();
  const prepare = (before: string[]): Promise<string> => {
    const key = JSON.stringify(before.map((b) => asRun(b)));
    let dir = prepared.get(key);
    if (!dir)
      prepared.set(
        key,
        (dir = (async () => {
          const env = envFor();
          const b = before.at(-1)!;
          if (before.length > 1) await copyStore(await prepare(before.slice(0, -1)), env.PASSK_DATA_DIR);
          else await fresh(b, env);
          const r = await runAsync(asRun(b), env);
          expect(r.code, `${b}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`).toBe(0);
          return env.PASSK_DATA_DIR;
        })()),
      );
    return dir;
  };

  /** Runs one command as its handling says and checks the outcome (rejects with the failed expectation). */
  async function check(cmd: string, how: Exclude<Handling, { kind: 'not-here' }>): Promise<void> {
    // A plain command (exit 0 expected, nothing before it, no stand-in, no output matched, no data directory of its
    // own) is what prepare([cmd]) runs and checks, in a fresh data directory of its own: one run when it is also the
    // first step of a list (two of the walkthrough's runs were run twice, ~2 s of CPU each).
    if (
      how.kind === 'exit' &&
      (how.code ?? 0) === 0 &&
      !how.before?.length &&
      !how.stub &&
      !how.stdout &&
      !/--data-dir[ =]/.test(cmd)
    ) {
      await prepare([cmd]);
      return;
    }
    const env = envFor();
    if (how.kind === 'exit') {
      if (how.before?.length) await copyStore(await prepare(how.before), env.PASSK_DATA_DIR);
      else await fresh(cmd, env);
      const stub = how.stub && (await how.stub.start());
      try {
        const command = stub ? asRun(cmd).replaceAll(how.stub!.replace, stub.url) : asRun(cmd);
        const r = await runAsync(command, env);
        expect(r.code, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`).toBe(how.code ?? 0);
        if (how.stdout) expect(r.stdout).toMatch(how.stdout);
        if (stub) expect(stub.requests(), 'the command reached the local stand-in').toBeGreaterThan(0);
      } finally {
        await stub?.close();
      }
      return;
    }
    await fresh(cmd, env);
    if (how.kind === 'serve') {
      const p = start(asRun(cmd, ' --port 0'), env, how.ready);
      try {
        const line = await p.ready;
        expect(line, p.out().slice(-3000)).not.toBeNull();
        const url = /https?:\/\/[^\s"]+/.exec(line!)![0];
        // off loopback the printed URL carries the token; the API takes it as a bearer token
        const token = new URL(url).searchParams.get('token');
        const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        expect(res.status, url).toBe(200);
      } finally {
        const end = await p.stop();
        expect(end.code === 0 || end.code === 143 || end.signal === 'SIGTERM', JSON.stringify(end)).toBe(true);
      }
      return;
    }
    const p = start(asRun(cmd), env, how.ready);
    if (how.ready) expect(await p.ready, `it never printed ${how.ready}\n${p.out().slice(-2000)}`).not.toBeNull();
    await new Promise((done) => setTimeout(done, how.ms));
    expect(p.child.exitCode, `it exited before it was stopped\n${p.out().slice(-2000)}`).toBeNull();
    const end = await p.stop();
    expect(end.code, p.out().slice(-2000)).toBe(0);
  }
};
