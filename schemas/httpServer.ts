/**
 * The connection deadlines of passk's HTTP servers, as node:http options: a policy of the edges, like retry.ts, shared
 * by producers/ingest and web/ (the dashboard) (neither may import the other, nor deploy/).
 */

/**
 * Deadlines of the server's connections (deploy/config.ts `http`), so a slow or silent client cannot hold one forever:
 * all headers within `headersTimeoutMs`, the whole request within `requestTimeoutMs` (else 408 and the connection
 * is closed), and a kept-alive connection idle for `keepAliveTimeoutMs` between requests is closed.
 */
export interface HttpTimeouts {
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  readonly keepAliveTimeoutMs?: number;
}

/**
 * node:http options from the deadlines; the expiry check runs often enough for the shortest one. Shared by every HTTP
 * server of passk (the ingest server and the dashboard's), so it lives on the ground floor both import.
 */
export const httpServerOptions = (t: HttpTimeouts = {}) => {
  const headersTimeout = t.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(t.requestTimeoutMs ?? 60_000, headersTimeout);
  return {
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: t.keepAliveTimeoutMs ?? 5_000,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(headersTimeout / 4))),
  };
};
