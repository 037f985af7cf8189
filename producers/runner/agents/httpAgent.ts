import { sha256 } from '../../importers/common.ts';
import { AgentFailed, AgentUnavailable, classifyFailure, TrialTimeout } from './failures.ts';
import { type Agent, toAgentResult } from './types.ts';

export interface HttpAgentOptions {
  /** Each trial is one POST of the TrialRequest as JSON; the reply is an AgentResult (or a JSON string). */
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly fetch?: typeof fetch;
}

/**
 * An agent behind HTTP. Each trial carries its own `trial_id`, so a server that keeps sessions starts a fresh one.
 * 408, 429, 5xx and network failures are infrastructure (ungraded, retried); another 4xx is the agent's failure.
 */
export const createHttpAgent = (opts: HttpAgentOptions): Agent => {
  const doFetch = opts.fetch ?? fetch;
  return {
    kind: 'http',
    fingerprint: `http:${sha256(opts.url)}`,
    async run(request, { timeoutMs }) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), timeoutMs);
      let res: Response;
      let body: string;
      try {
        res = await doFetch(opts.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...opts.headers },
          body: JSON.stringify(request),
          signal: abort.signal,
        });
        body = await res.text();
      } catch (e) {
        if (abort.signal.aborted) throw new TrialTimeout(timeoutMs);
        const c = classifyFailure(e);
        throw c.infra
          ? new AgentUnavailable(c.kind, `${opts.url}: ${c.message}`, e)
          : new AgentFailed(c.kind, c.message);
      } finally {
        clearTimeout(timer);
      }
      if (!res.ok) {
        const c = classifyFailure({
          status: res.status,
          message: `${opts.url} answered ${res.status}: ${body.slice(0, 200)}`,
        });
        throw c.infra ? new AgentUnavailable(c.kind, c.message) : new AgentFailed(c.kind, c.message);
      }
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        throw new AgentFailed('agent_protocol', `${opts.url} did not answer JSON: ${body.slice(0, 200)}`);
      }
      return toAgentResult(value);
    },
    close: async () => {},
  };
};
