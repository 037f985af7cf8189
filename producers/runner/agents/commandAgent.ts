import { spawn } from 'node:child_process';
import { sha256 } from '../../importers/common.ts';
import { commandFiles, MAX_HASHED_BYTES } from './commandFiles.ts';
import { AgentFailed, AgentUnavailable, TrialTimeout } from './failures.ts';
import { type Agent, type AgentResult, toAgentResult } from './types.ts';

export interface CommandAgentOptions {
  /** A shell command; it runs once per trial, a fresh process each time. */
  readonly command: string;
  /** Where the command runs, and where the files it names are found (`commandFiles`). @default process.cwd() */
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Exit code for "temporary failure, try again" (sysexits.h EX_TEMPFAIL): infrastructure, not the agent's verdict. */
export const EXIT_TEMPFAIL = 75;

/** Exit codes of a shell that could not run the command (not executable, not found). */
const CANNOT_START = new Set([126, 127]);

/** A stack trace on stderr: Python's header, or the `    at …` frames Node prints for an uncaught error. */
const TRACEBACK = /^Traceback \(most recent call last\):$|^\s+at \S.*:\d+:\d+\)?$/m;

/** How many of the first stderr lines an infrastructure failure keeps, and at most how many characters. */
export const STDERR_LINES = 5;
const STDERR_CHARS = 600;

/** The first lines of what the agent wrote to stderr, one line, clipped. */
export const stderrHead = (stderr: string): string => {
  const head = stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '')
    .slice(0, STDERR_LINES)
    .join(' | ');
  return head.length > STDERR_CHARS ? `${head.slice(0, STDERR_CHARS)}…` : head;
};

/** The last non-empty line of stdout as an AgentResult, or undefined when it is none. */
const resultOf = (stdout: string): AgentResult | undefined => {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return toAgentResult(JSON.parse(last));
  } catch {
    return undefined;
  }
};

const MIB = 1024 * 1024;

/**
 * A command agent's fingerprint: the command's text and the contents of each file it names (`commandFiles`), so
 * editing the script makes a new default agent version. A command that names no file keeps the fingerprint of its
 * text alone (the versions recorded before files were hashed). A file over MAX_HASHED_BYTES is left out, and said.
 */
export const commandFingerprint = (
  command: string,
  cwd: string,
): Pick<Agent, 'fingerprint'> & { fingerprintNote?: string } => {
  const { hashed, skipped } = commandFiles(command, cwd);
  const files = hashed.map((f) => ` ${JSON.stringify(f.word)}:${f.sha256}`).join('');
  return {
    fingerprint: `command:${sha256(command)}${files}`,
    ...(skipped.length
      ? {
          fingerprintNote: `${skipped.map((f) => `${f.word} (${(f.bytes / MIB).toFixed(1)} MiB)`).join(', ')} not hashed into the agent version (files over ${MAX_HASHED_BYTES / MIB} MiB are not): editing ${skipped.length > 1 ? 'them' : 'it'} makes no new version`,
        }
      : {}),
  };
};

/**
 * An agent run as a command, one process per trial: the TrialRequest is JSON on stdin, the AgentResult is JSON on
 * stdout (the last non-empty line; a non-JSON line is the output as text). Exit 0 = a result. Infrastructure
 * (ungraded, retried), with the first stderr lines in the message: a command that cannot start (exit 126/127),
 * exit 75, death by a signal, a stack trace on stderr with a non-zero exit or no output, or a non-zero exit without
 * a result on stdout. A non-zero exit with an AgentResult on stdout is the agent's own failure (graded). Past the
 * timeout the whole process group is killed.
 */
export const createCommandAgent = (opts: CommandAgentOptions): Agent => ({
  kind: 'command',
  ...commandFingerprint(opts.command, opts.cwd ?? process.cwd()),
  run: (request, { timeoutMs }) =>
    new Promise<AgentResult>((resolve, reject) => {
      const child = spawn(opts.command, {
        shell: true,
        cwd: opts.cwd,
        ...(opts.env ? { env: opts.env } : {}),
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      const kill = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const timer = setTimeout(() => ((timedOut = true), kill()), timeoutMs);
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      // the head of stderr is kept (where an error starts), plus enough of the rest to see a traceback
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        if (stderr.length < 64_000) stderr += d;
      });
      child.stdin.on('error', () => {}); // an agent that does not read its input is not an error
      child.stdin.end(JSON.stringify(request));
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new AgentUnavailable('agent_spawn', `cannot start "${opts.command}": ${e.message}`, e));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) return reject(new TrialTimeout(timeoutMs));
        const head = stderrHead(stderr);
        const said = head ? `: ${head}` : '';
        const unavailable = (kind: string, what: string) => reject(new AgentUnavailable(kind, `${what}${said}`));
        if (signal) return unavailable('agent_crashed', `the agent was killed by ${signal}`);
        if (code === EXIT_TEMPFAIL) return unavailable('agent_tempfail', 'the agent exited with 75 (try again)');
        if (code !== null && CANNOT_START.has(code))
          return unavailable('agent_spawn', `cannot start "${opts.command}" (exit ${code})`);
        const traceback = TRACEBACK.test(stderr);
        if (code !== 0) {
          if (traceback) return unavailable('agent_traceback', `the agent crashed with a traceback (exit ${code})`);
          const result = resultOf(stdout);
          if (!result) return unavailable('agent_no_result', `the agent exited with code ${code} without a result`);
          return reject(new AgentFailed('agent_exit', `the agent exited with code ${code}${said}`));
        }
        if (traceback && stdout.trim() === '')
          return unavailable('agent_traceback', 'the agent wrote a traceback and no output');
        const last = stdout.trim().split('\n').at(-1) ?? '';
        let value: unknown = last;
        try {
          value = JSON.parse(last);
        } catch {
          // a plain line of text is the output
        }
        try {
          resolve(toAgentResult(value));
        } catch (e) {
          reject(e);
        }
      });
    }),
  close: async () => {},
});
