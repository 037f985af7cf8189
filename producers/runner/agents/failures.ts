import { PipelineError } from '../../../schemas/errors.ts';

/** The trial ran past its time limit: not the agent's verdict, so ungraded (and retried). */
export class TrialTimeout extends PipelineError {
  readonly kind = 'timeout';
  constructor(readonly timeoutMs: number) {
    super(`the trial did not finish within ${timeoutMs} ms`, { retriable: true });
  }
}

/** The agent could not be reached or its sandbox died: an infrastructure failure (ungraded, retried). */
export class AgentUnavailable extends PipelineError {
  constructor(
    readonly kind: string,
    message: string,
    cause?: unknown,
  ) {
    super(message, { retriable: true, cause });
  }
}

/** The agent ran and failed on its own account: a graded failure. */
export class AgentFailed extends Error {
  override name = 'AgentFailed';
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

export interface FailureClass {
  /** true: infrastructure (ungraded, retried); false: the agent's own failure (graded as failed). */
  readonly infra: boolean;
  readonly kind: string;
  readonly message: string;
}

/** Error codes of a network that did not carry the call (Node's and undici's). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
]);

const httpClass = (status: number, message: string): FailureClass =>
  status === 408 || status === 429 || status >= 500
    ? { infra: true, kind: `http_${status}`, message }
    : { infra: false, kind: `http_${status}`, message };

/**
 * Sorts an agent's error by its typed fields, never its message text:
 * - a PipelineError says itself (`retriable`); an error with `infra: true` or `retriable: true` is infrastructure;
 * - an HTTP status (`status` / `statusCode`, as OpenAI-style SDKs carry) of 408, 429 or 5xx is infrastructure,
 *   another 4xx is the agent's failure;
 * - a network `code` (ECONNREFUSED, ETIMEDOUT, …) or an AbortError/TimeoutError is infrastructure;
 * - anything else the agent threw is its own failure (`agent_exception`), graded as failed.
 */
export const classifyFailure = (e: unknown): FailureClass => {
  const err = (e ?? {}) as {
    name?: unknown;
    message?: unknown;
    kind?: unknown;
    infra?: unknown;
    retriable?: unknown;
    status?: unknown;
    statusCode?: unknown;
    code?: unknown;
    cause?: unknown;
  };
  const message = typeof err.message === 'string' ? err.message : String(e);
  const kind = typeof err.kind === 'string' ? err.kind : undefined;
  if (e instanceof AgentFailed) return { infra: false, kind: e.kind, message };
  if (e instanceof PipelineError)
    return { infra: e.retriable, kind: kind ?? (e.retriable ? 'infra_error' : 'agent_error'), message };
  if (err.infra === true || err.retriable === true) return { infra: true, kind: kind ?? 'infra_error', message };
  const status =
    typeof err.status === 'number' ? err.status : typeof err.statusCode === 'number' ? err.statusCode : undefined;
  if (status !== undefined && status >= 400) return httpClass(status, message);
  if (typeof err.code === 'string' && NETWORK_CODES.has(err.code))
    return { infra: true, kind: `network_${err.code.toLowerCase()}`, message };
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return { infra: true, kind: 'timeout', message };
  if (err.cause !== undefined && err.cause !== e) {
    const inner = classifyFailure(err.cause);
    if (inner.infra) return { ...inner, message };
  }
  return { infra: false, kind: kind ?? 'agent_exception', message };
};

/** An error as plain data, to cross a worker or process boundary with the fields `classifyFailure` reads. */
export const errorData = (e: unknown): Record<string, unknown> => {
  const err = (e ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { message: typeof err.message === 'string' ? err.message : String(e) };
  for (const k of ['name', 'kind', 'infra', 'retriable', 'status', 'statusCode', 'code'])
    if (['string', 'number', 'boolean'].includes(typeof err[k])) out[k] = err[k];
  return out;
};
