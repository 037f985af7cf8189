/* global fetch, URLSearchParams */
/** The dashboard's JSON API (same origin; the token, when there is one, travels as a cookie). */
const get = async (path, params = {}) => {
  const qs = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const res = await fetch(`${path}${qs.size ? `?${qs}` : ''}`, { headers: { accept: 'application/json' } });
  if (!res.ok)
    throw new Error(`${path}: ${res.status} ${(await res.json().catch(() => ({}))).error ?? res.statusText}`);
  return res.json();
};

export const api = {
  groups: () => get('/api/groups'),
  overview: (scope) => get('/api/overview', scope),
  compare: (q) => get('/api/compare', q),
  row: (q) => get('/api/row', q),
  /** One page of the row explorer, filtered and sorted by the server (`total` rows kept in all). */
  rows: (q) => get('/api/rows', q),
  gates: (q = {}) => get('/api/gates', q),
  production: () => get('/api/production'),
  trace: (trace_id) => get('/api/trace', { trace_id }),
  traces: (q = {}) => get('/api/traces', q),
  /** Publishes a FailureConfirmed (the write token goes as a bearer token, never in the URL). */
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
};
