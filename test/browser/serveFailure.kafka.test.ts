import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from './chromium.ts';
import { passk, passkServer, ROOT } from './processes.ts';

/**
 * `passk serve` when its processors crash: a real fault at the store's real boundary (the disk under chDB: every
 * table directory becomes a plain file, so the next insert cannot create its part). The page's live dot turns red
 * with the reason, /healthz answers 503, and the process exits non-zero instead of serving numbers that no longer move.
 * On both logs: the embedded one, and Kafka + schema registry (the test stack's, in topics of its own), where the
 * processors consume from the broker into the same embedded store.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const breakStoreDisk = (dataDir: string): number => {
  const tables = join(dataDir, 'store', 'store');
  let broken = 0;
  for (const prefix of readdirSync(tables))
    for (const table of readdirSync(join(tables, prefix))) {
      const path = join(tables, prefix, table);
      // moved out of the store in one step, not removed file by file: chDB may write a part into it meanwhile
      // (rmSync then failed with ENOTEMPTY in one CI run); afterAll removes the data dir with it
      renameSync(path, join(dataDir, `broken-${broken}`));
      writeFileSync(path, 'not a directory');
      broken++;
    }
  return broken;
};

const waitFor = async <T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 90_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await get().catch(() => undefined as T);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > until) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

const backends: [string, () => NodeJS.ProcessEnv][] = [
  ['the embedded log', () => ({ PASSK_BACKEND: 'embedded' })],
  [
    'Kafka',
    () => ({
      PASSK_BACKEND: 'kafka',
      KAFKA_BROKERS: inject('kafkaBrokers'),
      SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
      PASSK_KAFKA_NAMESPACE: `passk-serve-fail-${randomBytes(4).toString('hex')}.`,
      CLICKHOUSE_URL: '',
    }),
  ],
];

describe.each(backends)('passk serve on %s when its processors crash', (_, backendEnv) => {
  it('turns the live dot red with the reason, answers 503 on /healthz, and exits non-zero', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-serve-fail-'));
    dirs.push(dataDir);
    const env = backendEnv();
    const server = await passkServer(
      ['--data-dir', dataDir, 'serve', '--port', '0', '--json', '--exit-after-failure', '45'],
      (line) => (line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined),
      120_000,
      env,
    );
    let stderr = '';
    server.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => server.child.once('close', resolve));
    const url = server.value;
    const browser = await launchChromium();
    try {
      const first = await passk(['--data-dir', dataDir, 'import', join(ROOT, 'examples/tau-bench-gpt-4o.jsonl')], {
        env,
      });
      expect(first.code).toBe(0);
      await waitFor(
        async () => (await (await fetch(`${url}api/groups`)).json()) as unknown[],
        (g) => g.length > 0,
        'the first import on the page',
      );
      await browser.page.goto(url);
      // as long as the failed state's wait below: playwright's 30 s default ran out under CI's load (both lanes busy)
      await browser.page.waitForSelector('#live[data-state="on"]', { timeout: 90_000 });
      expect(await (await fetch(`${url}api/status`)).json()).toEqual({ state: 'ok' });

      // the events went through the backend under test: on Kafka, no embedded log was ever opened
      expect(existsSync(join(dataDir, 'log.sqlite'))).toBe(env.PASSK_BACKEND === 'embedded');
      expect(breakStoreDisk(dataDir)).toBeGreaterThan(0);
      const second = await passk(['--data-dir', dataDir, 'import', join(ROOT, 'examples/refunds-v1-v2.jsonl')], {
        env,
      });
      expect(second.code).toBe(0); // the log took it; the processors cannot store it

      // /healthz first, polled, then the dot: the grace period runs from the processors' failure, and under CI's load
      // the page saw it late enough that the server had exited before /healthz was asked (20 s grace, ECONNREFUSED)
      const health = await waitFor(
        () => fetch(`${url}healthz`),
        (r) => r.status === 503,
        'healthz answering 503',
      );
      expect(((await health.json()) as { error: string }).error).toMatch(/insert into/);
      expect(((await (await fetch(`${url}api/status`)).json()) as { state: string }).state).toBe('failed');
      await browser.page.waitForSelector('#live[data-state="failed"]', { timeout: 90_000 });
      const live = await browser.page.locator('#live');
      expect(await live.textContent()).toMatch(/processors stopped: insert into \w+ refused/);
      expect(await live.getAttribute('class')).toContain('error');

      // still up, saying so, for the grace period; then it exits non-zero on its own
      const code = await exited;
      expect(code).not.toBe(0);
      expect(code).toBe(4);
      expect(stderr).toMatch(/passk: the processors stopped: insert into \w+ refused/);
      expect(stderr).toContain('exiting in 45 s');
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 240_000);
});
