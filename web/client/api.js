// @ts-check
/* global fetch, URLSearchParams */
/**
 * The dashboard's JSON API (same origin; the token, when there is one, travels as a cookie). Every call is typed by
 * the contract the server implements (web/contract.ts), so `npm run typecheck` checks each view's use of an answer.
 * @import { Answer, ApiPath, ConfirmAnswer, ConfirmBody, Query } from '../contract.ts'
 */

/** Pauses between the tries of a request the network dropped (ms). */
const AGAIN_AFTER_MS = [250, 1_000, 3_000];
/**
 * A GET the network dropped is sent again, up to three more times: fetch rejects (a TypeError) when no answer came at
 * all, as when the machine's network changes under a request in flight (Chromium's ERR_NETWORK_CHANGED: a VPN or a
 * Wi-Fi network coming up, an interface added) or the server restarts. One such drop made a whole view an error
 * banner. An answer, whatever its status, is never asked again.
 * @param {string} url
 * @param {RequestInit} init
 */
const fetchAgain = async (url, init) => {
  for (let tried = 0; ; tried++) {
    try {
      return await fetch(url, init);
    } catch (e) {
      if (!(e instanceof TypeError) || tried >= AGAIN_AFTER_MS.length) throw e;
      await new Promise((resolve) => setTimeout(resolve, AGAIN_AFTER_MS[tried]));
    }
  }
};

/** @param {string} path @param {Record<string, unknown>} [params] */
const urlOf = (path, params) => {
  const qs = new URLSearchParams(
    /** @type {[string, string][]} */ (
      Object.entries(params ?? {})
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .map(([k, v]) => [k, String(v)])
    ),
  );
  return `${path}${qs.size ? `?${qs}` : ''}`;
};

/**
 * @template {ApiPath} P
 * @param {P} path
 * @param {Query<P>} [params]
 * @returns {Promise<Answer<P>>}
 */
const ask = async (path, params) => {
  const res = await fetchAgain(urlOf(path, params), { headers: { accept: 'application/json' } });
  if (!res.ok)
    throw new Error(`${path}: ${res.status} ${(await res.json().catch(() => ({}))).error ?? res.statusText}`);
  return res.json();
};

/**
 * Questions asked ahead (`api.ahead`), by URL: the first identical question takes the answer in flight instead of
 * asking again; `api.dropAhead` forgets the ones nobody took.
 * @type {Map<string, Promise<unknown>>}
 */
const asked = new Map();

/**
 * @template {ApiPath} P
 * @param {P} path
 * @param {Query<P>} [params]
 * @returns {Promise<Answer<P>>}
 */
const get = async (path, params) => {
  const url = urlOf(path, params);
  const ahead = asked.get(url);
  asked.delete(url);
  return /** @type {Promise<Answer<P>>} */ (ahead ?? ask(path, params));
};

/** @type {Promise<Answer<'/api/commands'>> | undefined} */
let commands;

export const api = {
  /**
   * Asks a question now that a view will ask once the list of suites and versions is in (`prefetch`), so the two
   * travel together: the view's identical question takes this answer.
   * @template {ApiPath} P
   * @param {P} path
   * @param {Query<P>} params
   */
  ahead: (path, params) => {
    const url = urlOf(path, params);
    if (asked.has(url)) return;
    const answer = ask(path, params);
    answer.catch(() => undefined); // a failure is the taker's to see; one nobody takes is nobody's
    asked.set(url, answer);
  },
  /** Forgets the questions asked ahead that no view took (the render that asked them is over). */
  dropAhead: () => asked.clear(),
  groups: () => get('/api/groups'),
  /** @param {Query<'/api/overview'>} scope */
  overview: (scope) => get('/api/overview', scope),
  /** @param {Query<'/api/compare'>} q */
  compare: (q) => get('/api/compare', q),
  /** @param {Query<'/api/row'>} q */
  row: (q) => get('/api/row', q),
  /**
   * One page of the row explorer, filtered and sorted by the server (`total` rows kept in all).
   * @param {Query<'/api/rows'>} q
   */
  rows: (q) => get('/api/rows', q),
  /** @param {Query<'/api/gates'>} [q] */
  gates: (q = {}) => get('/api/gates', q),
  production: () => get('/api/production'),
  /** @param {string} trace_id */
  trace: (trace_id) => get('/api/trace', { trace_id }),
  /** @param {Query<'/api/traces'>} [q] */
  traces: (q = {}) => get('/api/traces', q),
  /**
   * Publishes a FailureConfirmed (the write token goes as a bearer token, never in the URL).
   * @param {ConfirmBody} body
   * @param {string} token
   * @returns {Promise<ConfirmAnswer>}
   */
  confirm: async (body, token) => {
    const res = await fetch('/api/review/confirm', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const answer = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(answer.error ?? `${res.status} ${res.statusText}`);
    return answer;
  },
  judges: () => get('/api/judges'),
  datasets: () => get('/api/datasets'),
  deadLetters: () => get('/api/dead-letters'),
  /**
   * The commands the views suggest, made by the server with the CLI's formatter (web/commands.ts): asked once a page.
   * @returns {Promise<Answer<'/api/commands'>>}
   */
  commands: () => (commands ??= get('/api/commands').catch((e) => ((commands = undefined), Promise.reject(e)))),
};
