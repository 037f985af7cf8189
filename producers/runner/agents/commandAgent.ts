import { spawn } from 'node:child_process';
import { sha256 } from '../../importers/common.ts';
import { AgentFailed, AgentUnavailable, TrialTimeout } from './failures.ts';
import { type Agent, type AgentResult, toAgentResult } from './types.ts';

export interface CommandAgentOptions {
  /** A shell command; it runs once per trial, a fresh process each time. */
  readonly command: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Exit code for "temporary failure, try again" (sysexits.h EX_TEMPFAIL): infrastructure, not the agent's verdict. */
export const EXIT_TEMPFAIL = 75;

/**
 * An agent run as a command, one process per trial: the TrialRequest is JSON on stdin, the AgentResult is JSON on
 * stdout (the last non-empty line; a non-JSON line is the output as text). Exit 0 = a result; exit 75 or death by a
 * signal = infrastructure (ungraded, retried); another exit code = the agent's failure. Past the timeout the whole
 * process group is killed.
 */
export const createCommandAgent = (opts: CommandAgentOptions): Agent => ({
  kind: 'command',
  fingerprint: `command:${sha256(opts.command)}`,
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
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2_000)));
      child.stdin.on('error', () => {}); // an agent that does not read its input is not an error
      child.stdin.end(JSON.stringify(request));
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new AgentUnavailable('agent_spawn', `cannot start "${opts.command}": ${e.message}`, e));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) return reject(new TrialTimeout(timeoutMs));
        const tail = stderr.trim().split('\n').slice(-3).join(' | ');
        if (signal)
          return reject(
            new AgentUnavailable('agent_crashed', `the agent was killed by ${signal}${tail ? `: ${tail}` : ''}`),
          );
        if (code === EXIT_TEMPFAIL)
          return reject(
            new AgentUnavailable('agent_tempfail', `the agent exited with 75 (try again)${tail ? `: ${tail}` : ''}`),
          );
        if (code !== 0)
          return reject(new AgentFailed('agent_exit', `the agent exited with code ${code}${tail ? `: ${tail}` : ''}`));
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
