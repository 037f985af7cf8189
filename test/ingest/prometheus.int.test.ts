import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { passkServer } from '../browser/processes.ts';

/**
 * `GET /metrics` of `passk ingest`, `passk serve` and `passk process --metrics-port`, scraped by a real Prometheus
 * (Debian's `prometheus` package): every target up, the OTLP receiver's counts and the processors' read back through
 * Prometheus' own query API; the example alert rules pass `promtool check rules`, and every target's passk families
 * pass `promtool check metrics`.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';
const TOKEN = 'prometheus-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'passk-prom-'));
const children: ChildProcess[] = [];
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  // each child gone before its directory is removed: Prometheus writes its TSDB while it shuts down (CI once saw
  // ENOTEMPTY from an rmSync that raced it)
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      const late = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(late);
    }),
  );
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const urlOf = (line: string) => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }).url : undefined);

describe('Prometheus scrapes passk', () => {
  it('finds the binaries it needs', () => {
    // Debian's prometheus package; without it this test fails, saying so (it never passes by skipping).
    expect(existsSync(PROMETHEUS), `${PROMETHEUS} is missing: apt-get install prometheus`).toBe(true);
    expect(existsSync(PROMTOOL), `${PROMTOOL} is missing: apt-get install prometheus`).toBe(true);
  });

  it('checks the example alert rules with promtool', () => {
    const r = spawnSync(PROMTOOL, ['check', 'rules', join(ROOT, 'deploy/prometheus/passk-alerts.yml')], {
      encoding: 'utf8',
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: 6 rules found/);
  });

  it('scrapes ingest, serve and process, and reads their counts back through PromQL', async () => {
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    const ingest = await passkServer(['--data-dir', a, 'ingest', '--port', '0', '--token', TOKEN, '--json'], urlOf);
    stops.push(ingest.stop);
    const serve = await passkServer(['--data-dir', b, 'serve', '--port', '0', '--json'], urlOf);
    stops.push(serve.stop);
    const processPort = await freePort();
    const proc = spawn(
      process.execPath,
      [join(ROOT, 'bin/passk.mjs'), '--data-dir', a, 'process', '--metrics-port', String(processPort)],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(proc);

    // One GenAI span and one span of no LLM convention: 1 kept, 1 refused.
    const span = (id: string, attributes: object[]) => ({
      traceId: id.repeat(32),
      spanId: id.repeat(16),
      name: 'x',
      attributes,
    });
    const res = await fetch(new URL('/v1/traces', ingest.value), {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  span('a', [{ key: 'gen_ai.operation.name', value: { stringValue: 'chat' } }]),
                  span('b', [{ key: 'http.method', value: { stringValue: 'GET' } }]),
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);

    const targets = [new URL(ingest.value).host, new URL(serve.value).host, `127.0.0.1:${processPort}`];
    for (const t of targets) {
      let page = '';
      // until each server is up (passk process opens its metrics port once its topologies start: 13 s on a quiet
      // machine, past 20 s on a busy one); the test's own timeout bounds the wait
      for (const until = Date.now() + 150_000; !page && Date.now() < until;)
        page = await fetch(`http://${t}/metrics`)
          .then((r) => (r.ok ? r.text() : ''))
          .catch(async () => (await sleep(200), ''));
      // passk's own families (prom-client's process and Node.js defaults carry names promtool's lint dislikes).
      const own = page.split('\n').filter((l) => /^(# (HELP|TYPE) )?passk_/.test(l));
      expect(own.length, t).toBeGreaterThan(4);
      const lint = spawnSync(PROMTOOL, ['check', 'metrics'], { input: `${own.join('\n')}\n`, encoding: 'utf8' });
      expect(lint.status, `${t}: ${lint.stdout}${lint.stderr}`).toBe(0);
    }

    const promPort = await freePort();
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: ['${join(ROOT, 'deploy/prometheus/passk-alerts.yml')}']`,
        'scrape_configs:',
        `  - job_name: passk-ingest\n    static_configs: [{ targets: ['${targets[0]}'] }]`,
        `  - job_name: passk-serve\n    static_configs: [{ targets: ['${targets[1]}'] }]`,
        `  - job_name: passk-process\n    static_configs: [{ targets: ['${targets[2]}'] }]`,
      ].join('\n'),
    );
    const prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(prometheus);
    let log = '';
    prometheus.stderr!.on('data', (c: Buffer) => (log += c.toString()));

    const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const r = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = (await r.json()) as {
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      return body.data.result;
    };
    const until = async (q: string, ok: (r: Awaited<ReturnType<typeof query>>) => boolean) => {
      for (let i = 0; i < 150; i++) {
        const r = await query(q).catch(() => []);
        if (ok(r)) return r;
        await sleep(200);
      }
      throw new Error(`prometheus: ${q} never held\n${log.slice(-2000)}`);
    };
    const up = await until('up', (r) => r.length === 3 && r.every((s) => s.value[1] === '1'));
    expect(up.map((s) => s.metric.job).sort()).toEqual(['passk-ingest', 'passk-process', 'passk-serve']);
    const spans = await until('passk_otlp_spans_total{job="passk-ingest"}', (r) => r.length === 1);
    expect(spans[0]!.value[1]).toBe('2');
    const refused = await until('passk_otlp_rejected_total{reason="no_convention"}', (r) => r.length === 1);
    expect(refused[0]!.value[1]).toBe('1');
    // the refused span is also a dead letter, written once
    const lettered = await until('passk_otlp_dead_letters_total{job="passk-ingest"}', (r) => r.length === 1);
    expect(lettered[0]!.value[1]).toBe('1');
    const lag = await until('passk_consumer_lag', (r) => r.length === 2);
    expect(lag.map((s) => s.metric.job).sort()).toEqual(['passk-process', 'passk-serve']);
    const rules = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { health: string }[] }[] };
    };
    expect(rules.data.groups[0]!.rules.map((r) => r.health)).not.toContain('err');
  }, 240_000);
});
