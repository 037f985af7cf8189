import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { httpServerOptions, type HttpTimeouts } from '../schemas/httpServer.ts';
import { InputError, PipelineError } from '../schemas/errors.ts';
import { plainPasskCommand, type PasskCommand } from '../schemas/commandLine.ts';
import { BadRequest, ROUTES } from './api.ts';
import { CONFIRM_PATH, ConfirmBody, type ConfirmAnswer } from './contract.ts';
import { authorize, bearerToken, checkBinding, DashboardConfigError, isLoopback, tokenCookie } from './auth.ts';
import type { DashboardData } from './data.ts';
import { readBody } from '../sinks/clickhouse/localApi.ts';
import { sharedAnswers } from './sharedAnswers.ts';
import { readStatic, resolveStatic } from './staticFiles.ts';
import { createUpdateHub, type LiveStatus } from './updates.ts';

export type DashboardServerOptions = {
  data: DashboardData;
  /** Connection deadlines (deploy/config.ts `http`). */
  timeouts?: HttpTimeouts;
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 7357 */
  port?: number;
  /** Required when `host` is not a loopback address. */
  token?: string;
  /** How often the store's watermark is checked while a page listens. @default 1000 */
  pollMs?: number;
  onError?: (e: unknown) => void;
  /**
   * Routes served before the dashboard's own (the ingest API, with its own write token): handles the request and
   * returns true, or returns false to leave it to the dashboard.
   */
  routes?: (req: IncomingMessage, res: ServerResponse, pathname: string) => Promise<boolean>;
  /**
   * The Production view's confirm action, `POST /api/review/confirm`: publishes the FailureConfirmed that
   * `passk review --confirm` publishes. It needs the write token (`Authorization: Bearer …`); without a token set,
   * confirming is refused.
   */
  review?: {
    token?: string;
    confirm: (
      body: ConfirmBody,
    ) => Promise<{ event_id: string; published: boolean; agent_version: string; agent_check?: string }>;
  };
  /**
   * How the views show a passk command (`npx passk …`): `passk serve` hands over the CLI's own `passkCommand`, so
   * the dashboard's commands are the CLI's, its --config, --backend and --data-dir included.
   * @default plainPasskCommand
   */
  command?: PasskCommand;
};

export interface DashboardServer {
  /** The address to open, with the token when one is set. */
  readonly url: string;
  readonly port: number;
  /** Checks the store now and pushes an update to every open page when it changed. */
  refresh(): Promise<void>;
  /**
   * Says on every page whether the numbers are still being kept up to date: `failed` turns the live dot red
   * with the message, `/api/status` returns it and `/healthz` answers 503.
   */
  setStatus(status: LiveStatus): void;
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(JSON.stringify(body));
};

export { CONFIRM_PATH };

const sameToken = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** `POST /api/review/confirm`: the write token, then the body, then the same confirmation as the CLI's. */
const confirmRoute = async (
  req: IncomingMessage,
  res: ServerResponse,
  review: DashboardServerOptions['review'],
): Promise<void> => {
  if (req.method !== 'POST') return sendJson(res, 405, { error: 'only POST' });
  if (!review) return sendJson(res, 501, { error: 'this server does not publish events: confirm with passk serve' });
  if (review.token === undefined)
    return sendJson(res, 401, {
      error: 'confirming is disabled: start passk serve with --ingest-token (or PASSK_INGEST_TOKEN)',
    });
  const bearer = bearerToken(req);
  if (bearer === undefined || !sameToken(bearer, review.token))
    return sendJson(res, 401, { error: 'a valid write token is required (the --ingest-token of passk serve)' });
  let body: ConfirmBody;
  try {
    const r = ConfirmBody.safeParse(JSON.parse(await readBody(req, 64_000)));
    if (!r.success)
      return sendJson(res, 400, { error: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    body = r.data;
  } catch (e) {
    return sendJson(res, 400, { error: `the body is not JSON: ${(e as Error).message}` });
  }
  try {
    const done = await review.confirm(body);
    const answer: ConfirmAnswer = {
      event_id: done.event_id,
      published: done.published,
      trace_id: body.trace_id,
      dataset_id: body.dataset_id,
      agent_version: done.agent_version,
      ...(done.agent_check ? { agent_check: done.agent_check } : {}),
    };
    return sendJson(res, 200, answer);
  } catch (e) {
    if (e instanceof InputError) return sendJson(res, 400, { error: e.message });
    if (e instanceof PipelineError && e.retriable)
      return sendJson(res, 503, { error: `the event log is unavailable: ${e.message}` });
    throw e;
  }
};

/** Serves the dashboard: static frontend, JSON API over the typed queries, and live updates (SSE). */
export const createDashboardServer = async (opts: DashboardServerOptions): Promise<DashboardServer> => {
  const host = opts.host ?? '127.0.0.1';
  checkBinding(host, opts.token);
  const loopback = isLoopback(host);
  const onError =
    opts.onError ??
    ((e: unknown) => process.stderr.write(`dashboard: ${e instanceof Error ? e.message : String(e)}\n`));
  // identical questions share one answer, kept until the store's watermark moves
  const data = sharedAnswers(opts.data);
  const context = { command: opts.command ?? plainPasskCommand };
  const hub = createUpdateHub({ watermark: () => data.watermark(), intervalMs: opts.pollMs, onError });
  let port = opts.port ?? 7357;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    if (opts.routes && (await opts.routes(req, res, url.pathname))) return;
    const auth = authorize(req, url, { token: opts.token, loopback });
    if (auth === 'bad_host') return sendJson(res, 421, { error: 'unexpected Host header' });
    if (auth === 'unauthorized') return sendJson(res, 401, { error: 'a valid token is required' });
    if (typeof auth === 'object') {
      res.writeHead(303, {
        ...SECURITY_HEADERS,
        location: auth.setCookieAndRedirect,
        'set-cookie': tokenCookie(opts.token!),
      });
      return void res.end();
    }
    if (url.pathname === CONFIRM_PATH) return confirmRoute(req, res, opts.review);
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'only GET' });
    if (url.pathname === '/api/events') return hub.attach(res);
    if (url.pathname === '/healthz')
      return hub.status.state === 'ok'
        ? sendJson(res, 200, { ok: true })
        : sendJson(res, 503, { ok: false, error: hub.status.message });
    if (url.pathname === '/api/status') return sendJson(res, 200, hub.status);
    const route = ROUTES[url.pathname];
    if (route) {
      try {
        return sendJson(res, 200, await route(data, url.searchParams, context));
      } catch (e) {
        if (e instanceof BadRequest) return sendJson(res, 400, { error: e.message });
        onError(e);
        return sendJson(res, 500, { error: e instanceof Error ? e.message : String(e) });
      }
    }
    const file = resolveStatic(url.pathname);
    const found = file === undefined ? undefined : await readStatic(file);
    if (!found) return sendJson(res, 404, { error: 'not found' });
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': found.type, 'cache-control': 'no-cache' });
    res.end(req.method === 'HEAD' ? undefined : found.body);
  };

  const server = createServer(httpServerOptions(opts.timeouts), (req, res) => {
    handle(req, res).catch((e: unknown) => {
      onError(e);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new DashboardConfigError(
              `port ${port} on ${host} is already in use (another passk serve or demo?): pass --port 0 for any free port, or --port with another number`,
            )
          : e.code === 'EACCES'
            ? new DashboardConfigError(
                `port ${port} on ${host} needs privileges this user lacks: pass --port 0 for any free port, or one above 1023`,
              )
            : e,
      ),
    );
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  // every view's first question is the list of suites and versions: asked now, the page that opens next finds it
  // answered or in flight (and the store's first query, which loads its parts, is paid before the page asks)
  void data.groups().catch(() => {});
  const shown = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${port}/${opts.token ? `?token=${encodeURIComponent(opts.token)}` : ''}`;

  return {
    url,
    port,
    refresh: () => hub.poke(),
    setStatus: (status) => hub.setStatus(status),
    close: async () => {
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
