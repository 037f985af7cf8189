import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Who may read the dashboard. Bound to a loopback address it is open to this machine (and checks the Host header,
 * so a web page elsewhere cannot reach it through DNS rebinding). Bound anywhere else it refuses to start
 * without a token, and then every request must carry it: `Authorization: Bearer …`, the `passk_token` cookie,
 * or `?token=` once (the server answers with the cookie and a redirect that drops the token from the URL).
 */
export class DashboardConfigError extends Error {
  override name = 'DashboardConfigError';
}

export const MIN_TOKEN_LENGTH = 16;
export const TOKEN_COOKIE = 'passk_token';

export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

/** Checks the bind address and token together, before the socket opens. */
export const checkBinding = (host: string, token: string | undefined): void => {
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    throw new DashboardConfigError(`the dashboard token must be at least ${MIN_TOKEN_LENGTH} characters`);
  if (!isLoopback(host) && token === undefined)
    throw new DashboardConfigError(
      `refusing to serve the dashboard on ${host} without a token: pass --token (or PASSK_DASHBOARD_TOKEN), or bind 127.0.0.1`,
    );
};

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const cookieToken = (req: IncomingMessage): string | undefined => {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === TOKEN_COOKIE) return decodeURIComponent(value.join('='));
  }
  return undefined;
};

/** The token of `Authorization: Bearer …`; the scheme is case-insensitive (RFC 7235). */
export const bearerToken = (req: IncomingMessage): string | undefined =>
  /^bearer +(\S.*)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();

export type AuthResult = 'ok' | 'unauthorized' | 'bad_host' | { setCookieAndRedirect: string };

export const authorize = (req: IncomingMessage, url: URL, opts: { token?: string; loopback: boolean }): AuthResult => {
  if (opts.loopback) {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!isLoopback(host)) return 'bad_host';
  }
  if (opts.token === undefined) return 'ok';
  // a bearer that is not the dashboard's token may be another one (the confirm action sends the write token): the
  // request is then let in by the cookie or not at all
  const bearer = bearerToken(req);
  if (bearer !== undefined && same(bearer, opts.token)) return 'ok';
  const fromQuery = url.searchParams.get('token');
  if (fromQuery !== null) {
    if (!same(fromQuery, opts.token)) return 'unauthorized';
    url.searchParams.delete('token');
    return { setCookieAndRedirect: url.pathname + (url.search || '') + url.hash };
  }
  const cookie = cookieToken(req);
  return cookie !== undefined && same(cookie, opts.token) ? 'ok' : 'unauthorized';
};

export const tokenCookie = (token: string): string =>
  `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
