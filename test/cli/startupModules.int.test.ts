import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * What a command loads at start-up, read from the process itself: bin/passk.mjs runs under a load hook
 * (test/helpers/traceModules.mjs) that lists every module it loads (ES modules as they load, CommonJS ones at exit).
 * A command loads the event log's and the store's clients when it opens them, and libphonenumber-js, ajv, yaml and
 * cli-table3 when it first needs them (docs/performance.md, "CLI start-up"); the time this saves is measured by
 * `npm run bench -- startup`, not here.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'passk-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/**
 * The packages (node_modules names) a passk command loads, after checking that it succeeded (and wrote nothing to
 * stderr, unless `stderr` says it reports its progress there).
 */
const packagesLoadedBy = async (args: string[], opts: { stderr?: boolean } = {}): Promise<Set<string>> => {
  const trace = join(dir, `trace-${n++}.txt`);
  const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      ['--import', './test/helpers/traceModules.mjs', 'bin/passk.mjs', ...args],
      {
        cwd: root,
        // the checkout's own path, the sources under tsx (as a user's `node bin/passk.mjs`), not the build the other
        // tests' children run (PASSK_CLI_BUILD, deploy/test/cliBuild.mjs): this file is what covers that path
        env: {
          ...process.env,
          PASSK_CLI_BUILD: undefined,
          PASSK_TRACE_MODULES: trace,
          PASSK_DATA_DIR: join(dir, 'data'),
          NO_COLOR: '1',
        },
      },
      (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    ),
  );
  if (!opts.stderr) expect(stderr).toBe('');
  expect(code, stderr).toBe(0);
  const urls = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  expect(urls.some((u) => u.endsWith('/cli/main.ts'))).toBe(true); // the trace saw passk's own modules
  return new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
};

/** Clients of a backend (Kafka, the registry, chDB, SQLite, a ClickHouse server) and the phone-number metadata. */
const BACKENDS = ['kafkajs', '@kafkajs/confluent-schema-registry', 'chdb', 'better-sqlite3', '@clickhouse/client'];
const HEAVY = ['kafkajs', '@kafkajs/confluent-schema-registry', 'chdb', 'libphonenumber-js'];

describe('CLI start-up loads what the command uses', () => {
  it('`passk --help` loads no command and no backend client', async () => {
    const loaded = await packagesLoadedBy(['--help']);
    expect([...loaded].filter((p) => [...BACKENDS, ...HEAVY].includes(p))).toEqual([]);
    expect(loaded.has('commander')).toBe(true);
  });

  // Not every command, to keep the suite's CPU down: the two whose definitions import the most (the runner with its
  // redaction, the dashboard with the processors and the OTLP receiver).
  it.each(['run', 'serve'])(
    '`passk %s --help` loads neither Kafka, the registry, chDB nor libphonenumber-js',
    async (c) => {
      const loaded = await packagesLoadedBy([c, '--help']);
      expect([...loaded].filter((p) => HEAVY.includes(p))).toEqual([]);
    },
  );

  // The store's commands load chDB and the embedded log, and only what they use besides: `check` reads the store's
  // drift without the topologies (rxjs), and neither reads a record (ajv), a YAML config (yaml) or serves metrics
  // (prom-client).
  it('`passk process --until-caught-up` and `passk check` on an empty store load only what they use', async () => {
    const processed = await packagesLoadedBy(['process', '--until-caught-up'], { stderr: true });
    expect(processed.has('chdb')).toBe(true);
    expect(processed.has('rxjs')).toBe(true);
    expect([...processed].filter((p) => ['ajv', 'yaml', 'prom-client', ...HEAVY].includes(p))).toEqual(['chdb']);
    const checked = await packagesLoadedBy(['check']);
    expect(checked.has('chdb')).toBe(true);
    expect([...checked].filter((p) => ['rxjs', 'ajv', 'yaml', 'prom-client', ...HEAVY].includes(p))).toEqual(['chdb']);
  });

  it('`passk report <file>` reads the file without loading any backend client', async () => {
    const loaded = await packagesLoadedBy(['report', '--json', 'examples/public-trials/tau_bench.jsonl']);
    expect([...loaded].filter((p) => [...BACKENDS, ...HEAVY].includes(p))).toEqual([]);
    expect(loaded.has('zod')).toBe(true); // it did validate the file
  });
});
