import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DashboardConfigError } from './auth.ts';
import type { DashboardData } from './data.ts';
import { rowPage } from './rowPage.ts';
import { createDashboardServer, type DashboardServer } from './server.ts';

const TOKEN = 'a-long-enough-test-token';

const stubData = (mark: { value: string }): DashboardData => ({
  watermark: async () => mark.value,
  groups: async () => [{ suite: 's', dataset_version: 'd1', agent_version: 'v1', rows: 2, trials: 6, last_at: 1 }],
  overview: async () => [],
  compare: async () => null,
  row: async () => null,
  rows: async (q) => rowPage({ ...q, versions: [], checks: [], failure_categories: [], rows: [] }, q),
  gates: async () => [],
  production: async () => ({ windows: [], alerts: [], repeated_input_flips: [] }),
  trace: async () => null,
  traces: async () => ({ traces: [], offset: 0, total: 0, agent_versions: [], segments: [], datasets: [] }),
  judges: async () => [],
  datasets: async () => [],
  deadLetters: async () => ({ total: 0, by_stage: {}, letters: [] }),
});

type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string };
const get = (port: number, path: string, headers: Record<string, string> = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });

const post = (port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

/** Opens the SSE stream and resolves each time an event of `name` arrives. */
const events = (port: number) => {
  const seen: { event: string; data: unknown }[] = [];
  let buffer = '';
  const waiters: (() => void)[] = [];
  const req = request({ host: '127.0.0.1', port, path: '/api/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (event && data) seen.push({ event, data: JSON.parse(data) });
        waiters.splice(0).forEach((w) => w());
      }
    });
  });
  req.end();
  const next = async (name: string, count: number) => {
    while (seen.filter((e) => e.event === name).length < count) await new Promise<void>((r) => waiters.push(r));
    return seen.filter((e) => e.event === name)[count - 1]!;
  };
  return { next, close: () => req.destroy() };
};

let server: DashboardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the dashboard server', () => {
  it('binds 127.0.0.1 by default and serves the page, the API and uPlot from node_modules', async () => {
    server = await createDashboardServer({ data: stubData({ value: 'a' }), port: 0 });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
    const page = await get(server.port, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>passk');
    expect(JSON.parse((await get(server.port, '/api/groups')).body)).toEqual([
      { suite: 's', dataset_version: 'd1', agent_version: 'v1', rows: 2, trials: 6, last_at: 1 },
    ]);
    const uplot = await get(server.port, '/vendor/uPlot.esm.js');
    expect(uplot.status).toBe(200);
    expect(uplot.headers['content-type']).toContain('javascript');
  });

  it('answers 400 for missing parameters and 404 outside its folders', async () => {
    server = await createDashboardServer({ data: stubData({ value: 'a' }), port: 0 });
    expect((await get(server.port, '/api/overview')).status).toBe(400);
    expect((await get(server.port, '/static/..%2f..%2fpackage.json')).status).toBe(404);
    expect((await get(server.port, '/static/../server.ts')).status).toBe(404);
  });

  it('refuses a version compared with itself, saying why', async () => {
    server = await createDashboardServer({ data: stubData({ value: 'a' }), port: 0 });
    const same = await get(server.port, '/api/compare?suite=s&dataset_version=d1&baseline=v1&candidate=v1');
    expect(same.status).toBe(400);
    expect(JSON.parse(same.body).error).toBe(
      'candidate: the same version as the baseline: a version compared with itself has no change to show',
    );
  });

  it('refuses a foreign Host header when bound to loopback (DNS rebinding)', async () => {
    server = await createDashboardServer({ data: stubData({ value: 'a' }), port: 0 });
    expect((await get(server.port, '/api/groups', { host: 'evil.example:80' })).status).toBe(421);
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    await expect(createDashboardServer({ data: stubData({ value: 'a' }), host: '0.0.0.0', port: 0 })).rejects.toThrow(
      DashboardConfigError,
    );
    await expect(
      createDashboardServer({ data: stubData({ value: 'a' }), host: '0.0.0.0', port: 0, token: 'short' }),
    ).rejects.toThrow(DashboardConfigError);
  });

  it('requires the token on every request when bound elsewhere', async () => {
    server = await createDashboardServer({ data: stubData({ value: 'a' }), host: '0.0.0.0', port: 0, token: TOKEN });
    expect(server.url).toContain(`?token=${TOKEN}`);
    expect((await get(server.port, '/api/groups')).status).toBe(401);
    expect((await get(server.port, '/')).status).toBe(401);
    expect((await get(server.port, '/api/groups', { authorization: 'Bearer wrong-token-of-some-length' })).status).toBe(
      401,
    );
    expect((await get(server.port, '/api/groups', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    const login = await get(server.port, `/?token=${TOKEN}`);
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe('/');
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toBe(`passk_token=${TOKEN}`);
    expect((await get(server.port, '/api/groups', { cookie })).status).toBe(200);
    expect((await get(server.port, '/?token=not-the-right-token-at-all')).status).toBe(401);
  });

  it('pushes an update to open pages when the store watermark moves', async () => {
    const mark = { value: 'w1' };
    server = await createDashboardServer({ data: stubData(mark), port: 0, pollMs: 60_000 });
    const stream = events(server.port);
    try {
      expect((await stream.next('hello', 1)).data).toMatchObject({ watermark: 'w1' });
      await server.refresh(); // unchanged: nothing is sent
      mark.value = 'w2';
      await server.refresh();
      expect((await stream.next('update', 1)).data).toMatchObject({ watermark: 'w2' });
    } finally {
      stream.close();
    }
  });

  it('answers ten identical concurrent requests with one query, and asks again once the watermark moves', async () => {
    const mark = { value: 'w1' };
    let asked = 0;
    const data = stubData(mark);
    server = await createDashboardServer({
      port: 0,
      pollMs: 60_000,
      data: {
        ...data,
        overview: async (scope) => {
          asked++;
          await new Promise((r) => setTimeout(r, 50));
          return [{ suite: scope.suite, mark: mark.value }] as never;
        },
      },
    });
    const path = '/api/overview?suite=s&dataset_version=d1';
    const replies = await Promise.all(Array.from({ length: 10 }, () => get(server!.port, path)));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(replies.map((r) => r.body)).size).toBe(1);
    expect(asked).toBe(1);
    expect((await get(server.port, path)).body).toBe(replies[0]!.body);
    expect(asked).toBe(1);
    mark.value = 'w2';
    expect(JSON.parse((await get(server.port, path)).body)).toEqual([{ suite: 's', mark: 'w2' }]);
    expect(asked).toBe(2);
  });

  it('confirms a failure only with the write token and a complete body, through the confirm port', async () => {
    const calls: unknown[] = [];
    const review = {
      token: TOKEN,
      confirm: async (b: unknown) => (calls.push(b), { event_id: 'e-1', published: true, agent_version: 'v1' }),
    };
    server = await createDashboardServer({ data: stubData({ value: 'a' }), port: 0, review });
    const body = JSON.stringify({ trace_id: 't-1', dataset_id: 'refunds', expected: 'deny', reviewer: 'ana' });
    expect((await get(server.port, '/api/review/confirm')).status).toBe(405);
    const none = await post(server.port, '/api/review/confirm', body);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body).error).toContain('write token');
    expect((await post(server.port, '/api/review/confirm', body, { authorization: 'Bearer wrong' })).status).toBe(401);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const missing = await post(server.port, '/api/review/confirm', JSON.stringify({ trace_id: 't-1' }), auth);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body).error).toContain('expected');
    expect((await post(server.port, '/api/review/confirm', 'not json', auth)).status).toBe(400);
    expect(calls).toEqual([]);
    const ok = await post(server.port, '/api/review/confirm', body, auth);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({
      event_id: 'e-1',
      published: true,
      trace_id: 't-1',
      dataset_id: 'refunds',
      agent_version: 'v1',
    });
    expect(calls).toEqual([JSON.parse(body)]);
  });

  it('refuses to confirm when no write token is set, and names the flag that sets it', async () => {
    server = await createDashboardServer({
      data: stubData({ value: 'a' }),
      port: 0,
      review: { confirm: async () => ({ event_id: 'never', published: true, agent_version: 'v1' }) },
    });
    const r = await post(server.port, '/api/review/confirm', '{}', { authorization: `Bearer ${TOKEN}` });
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).error).toContain('--ingest-token');
  });

  it('confirms with the write token when the dashboard has a token of its own (its cookie), any case of "Bearer"', async () => {
    const WRITE = 'the-write-token-0123456789';
    const calls: unknown[] = [];
    server = await createDashboardServer({
      data: stubData({ value: 'a' }),
      port: 0,
      token: TOKEN,
      review: {
        token: WRITE,
        confirm: async (b: unknown) => (calls.push(b), { event_id: 'e-2', published: true, agent_version: 'v1' }),
      },
    });
    const body = JSON.stringify({ trace_id: 't-2', dataset_id: 'refunds', expected: 'deny', reviewer: 'ana' });
    const cookie = `passk_token=${TOKEN}`;
    // the page: the dashboard's cookie, and the write token as the bearer
    const ok = await post(server.port, '/api/review/confirm', body, { cookie, authorization: `Bearer ${WRITE}` });
    expect(ok.status, ok.body).toBe(200);
    const lower = await post(server.port, '/api/review/confirm', body, { cookie, authorization: `bearer ${WRITE}` });
    expect(lower.status, lower.body).toBe(200);
    // the write token alone does not open the dashboard
    expect((await post(server.port, '/api/review/confirm', body, { authorization: `Bearer ${WRITE}` })).status).toBe(
      401,
    );
    expect((await get(server.port, '/api/groups', { authorization: `bEaReR ${TOKEN}` })).status).toBe(200);
    expect(calls).toHaveLength(2);
  });
});
