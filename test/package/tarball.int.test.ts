/**
 * The published package, as a user gets it: `npm pack` (its `prepack` runs `npm run build`), the tarball
 * installed into an empty project outside the repository, and there, with plain `node` (no tsx loader, no
 * TypeScript), `import { createRecorder } from 'passk'` records trials to an embedded data dir and
 * `npx passk report` reports them; the examples it ships, copied into a project, run as the README's own-agent
 * commands use them; then that project, made a git repository with its own dataset and agents, runs
 * the CI recipe's steps (examples/ci/passk-gate.yml) as GitHub Actions would, and gets a verdict.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { launchChromium } from '../browser/chromium.ts';
import { passkServer } from '../browser/processes.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'passk-tarball-'));
const app = join(work, 'app');
// Plain node: nothing inherited that could load tsx or point back into the repository.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !['NODE_OPTIONS', 'NODE_PATH'].includes(k) && !k.startsWith('PASSK_')),
);
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });

let tarball = '';
beforeAll(() => {
  const out = run('npm', ['pack', '--json', '--pack-destination', work], ROOT);
  const [packed] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  expect(packed!.files.map((f) => f.path)).toContain('dist/index.js');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // From npm's cache where it can (the repository's own install filled it with the tarballs; a fresh machine's cache
  // lacks the registry metadata an install of a tarball resolves, so --prefer-offline, not --offline), without install
  // scripts: better-sqlite3's script
  // downloads a prebuilt addon or compiles one (network, minutes). Its addon is the one the repository built, for
  // the same version and the same Node; the package under test is passk's tarball, not that build.
  run(
    'npm',
    ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev', tarball],
    app,
  );
  const addon = (base: string) => join(base, 'node_modules', 'better-sqlite3');
  const version = (base: string) => JSON.parse(readFileSync(join(addon(base), 'package.json'), 'utf8')).version;
  expect(version(app)).toBe(version(ROOT));
  cpSync(
    join(addon(ROOT), 'build', 'Release', 'better_sqlite3.node'),
    join(addon(app), 'build', 'Release', 'better_sqlite3.node'),
  );
}, 900_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed tarball on plain Node 20', () => {
  it('ships compiled JavaScript, declarations and source maps, and no tests or fixtures', () => {
    const files = run('tar', ['tzf', tarball], work).split('\n').filter(Boolean);
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/dist/index.js.map');
    expect(files).toContain('package/bin/passk.mjs');
    expect(files).toContain('package/dist/cli/main.js');
    // TypeScript only in the examples (agents a user copies and runs as they are: passk loads tsx)
    const source = (f: string) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('package/examples/');
    expect(files.filter(source)).toEqual([]);
    expect(files).toContain('package/dist/web/client/index.html');
    // the dashboard's views bundled by esbuild (deploy/build/build.mjs): one app.js and its map, no module files
    expect(files.filter((f) => f.startsWith('package/dist/web/client/')).sort()).toEqual(
      ['app.js', 'app.js.map', 'index.html', 'style.css'].map((f) => `package/dist/web/client/${f}`),
    );
    // The OTLP receiver loads the protocol's .proto files at run time.
    expect(files).toContain(
      'package/dist/producers/otlp/proto/opentelemetry/proto/collector/trace/v1/trace_service.proto',
    );
    expect(files.filter((f) => /\.test\.|testkit|\/test\/|fixtures/.test(f) || source(f))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'passk', 'package.json'), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(pkg.bin.passk).toBe('bin/passk.mjs');
  });

  it('ships every file its README links to: each relative link resolves inside the installed package', () => {
    const pkg = join(app, 'node_modules', 'passk');
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!.split('#')[0]!)
      .filter((l) => l !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(l));
    expect(links.length).toBeGreaterThan(10);
    // a link to a file the package does not ship (CONTRIBUTING.md, deploy/…, schemas/…) is a 404 on npm's page
    expect(links.filter((l) => !existsSync(join(pkg, l)))).toEqual([]);
  });

  it('imports createRecorder from passk (kafkajs left as installed), records trials to an embedded data dir, and npx passk reports them', () => {
    const trials = Array.from({ length: 12 }, (_, i) => ({
      suite: 'refunds',
      dataset_version: 'v1',
      row_id: `r${i % 4}`,
      run_id: 'run-1',
      attempt: Math.floor(i / 4),
      agent_version: 'prompt-v2',
      passed: i % 4 !== 3,
    }));
    writeFileSync(join(app, 'trials.jsonl'), trials.map((t) => JSON.stringify(t)).join('\n') + '\n');
    writeFileSync(
      join(app, 'record.mjs'),
      `import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
// kafkajs as passk resolves it, before passk is imported: neither the import nor the embedded backend may patch it
const Runner = createRequire(new URL('./node_modules/passk/package.json', import.meta.url))('kafkajs/src/consumer/runner.js');
const shipped = Object.getOwnPropertyDescriptors(Runner.prototype);
const { createRecorder } = await import('passk');
const recorder = await createRecorder({ backend: { backend: 'embedded', dataDir: './data' } });
for (const line of readFileSync('trials.jsonl', 'utf8').trim().split('\\n')) {
  const { agent_version, ...t } = JSON.parse(line);
  await recorder.recordTrial({ ...t, agent: { version: agent_version } });
}
await recorder.close();
const db = new Database('./data/log.sqlite', { readonly: true });
const onDisk = db.prepare("SELECT count(*) AS n FROM records WHERE topic = 'passk.trials'").get().n;
const now = Object.getOwnPropertyDescriptors(Runner.prototype);
const kafkajsUntouched = Object.keys(now).length === Object.keys(shipped).length &&
  Object.entries(shipped).every(([k, d]) => now[k]?.value === d.value && now[k]?.get === d.get);
console.log(JSON.stringify({ stats: recorder.stats, onDisk, loaders: process.execArgv, kafkajsUntouched }));
`,
    );
    const recorded = JSON.parse(run(process.execPath, ['record.mjs'], app));
    expect(recorded.stats.sent).toBe(12);
    expect(recorded.onDisk).toBe(12);
    expect(recorded.loaders).toEqual([]);
    expect(recorded.kafkajsUntouched).toBe(true);
    expect(readdirSync(join(app, 'data'))).toContain('log.sqlite');

    const report = JSON.parse(run('npx', ['--no-install', 'passk', 'report', '--json', 'trials.jsonl'], app));
    expect(report.groups).toHaveLength(1);
    expect(report.groups[0]).toMatchObject({ suite: 'refunds', agent_version: 'prompt-v2', rows: 4, trials: 12 });
    expect(existsSync(join(app, 'node_modules', '.bin', 'passk'))).toBe(true);
  });

  it('serves the dashboard from its bundled views: Chromium renders the recorded version, loading only the bundle', async () => {
    const bin = join(app, 'node_modules', 'passk', 'bin', 'passk.mjs');
    const data = mkdtempSync(join(work, 'served-'));
    run(process.execPath, [bin, '--data-dir', data, 'import', 'trials.jsonl'], app);
    const serve = await passkServer(
      ['--data-dir', data, 'serve', '--port', '0', '--json'],
      (line) => (line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined),
      120_000,
      env,
      { bin, cwd: app },
    );
    const browser = await launchChromium();
    try {
      const errors: string[] = [];
      const scripts: string[] = [];
      browser.page.on('pageerror', (e) => errors.push(e.message));
      browser.page.on('request', (r) => r.resourceType() === 'script' && scripts.push(new URL(r.url()).pathname));
      await browser.page.goto(new URL('#/overview', serve.value).href);
      await browser.page.getByText('prompt-v2').first().waitFor({ timeout: 60_000 });
      expect(errors).toEqual([]);
      expect(scripts.sort()).toEqual(['/static/app.js', '/vendor/uPlot.esm.js']);
    } finally {
      await browser.close();
      await serve.stop();
    }
  }, 180_000);

  it('runs a TypeScript agent with nothing more installed, as the README says (passk ships tsx and loads it)', () => {
    const bin = join(app, 'node_modules', 'passk', 'bin', 'passk.mjs');
    const data = mkdtempSync(join(work, 'typed-'));
    let rows = 0;
    // in an ES module package, and in a CommonJS one (what `npm init -y` writes), where a `.ts` file is CommonJS: it
    // failed there with ERR_INTERNAL_ASSERTION (tsx's ESM hook alone), found by a new user's trial
    for (const type of ['module', 'commonjs']) {
      const dir = mkdtempSync(join(app, 'typed-agent-'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `typed-${type}`, type }));
      cpSync(join(ROOT, 'examples', 'refund-agent', 'refunds.jsonl'), join(dir, 'refunds.jsonl'));
      rows = readFileSync(join(dir, 'refunds.jsonl'), 'utf8').trim().split('\n').length;
      writeFileSync(
        join(dir, 'agent.ts'),
        `export const meta = { version: 'typed-${type}' };\n` +
          'interface Refund { days_since_purchase: number; receipt: string }\n' +
          "export default async (input: Refund): Promise<string> => (input.days_since_purchase <= 30 && input.receipt === 'yes' ? 'approve' : 'deny');\n",
      );
      const args = ['run', '--dataset', join(dir, 'refunds.jsonl'), '--agent', join(dir, 'agent.ts'), '--k', '2'];
      run(process.execPath, [bin, '--data-dir', data, ...args], app);
    }
    run(process.execPath, [bin, '--data-dir', data, 'process', '--until-caught-up'], app);
    const report = JSON.parse(
      run(process.execPath, [bin, '--data-dir', data, 'report', '--from-store', '--json'], app),
    ) as { groups: { agent_version: string; trials: number }[] };
    // every row of the dataset twice: the agent ran in this process (its meta) and in the workers (its answers)
    expect(report.groups.map((g) => [g.agent_version, g.trials]).sort()).toEqual([
      ['typed-commonjs', 2 * rows],
      ['typed-module', 2 * rows],
    ]);
  }, 180_000);

  it("runs the README's own-agent commands on the examples the package ships, copied into the project", () => {
    const dir = mkdtempSync(join(work, 'examples-'));
    cpSync(join(app, 'node_modules', 'passk', 'examples'), join(dir, 'examples'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'own-examples', private: true }));
    const bin = join(app, 'node_modules', 'passk', 'bin', 'passk.mjs');
    const passkHere = (...args: string[]) =>
      run(process.execPath, [bin, '--data-dir', join(dir, '.passk'), ...args], dir);
    passkHere('dataset', 'publish', 'examples/refund-agent/refunds.jsonl', '--dataset', 'refunds');
    for (const agent of ['agent.ts', 'agent-v2.ts'])
      passkHere(
        'run',
        '--dataset',
        'examples/refund-agent/refunds.jsonl',
        '--agent',
        `examples/refund-agent/${agent}`,
        '--k',
        '1',
      );
    passkHere('process', '--until-caught-up');
    const report = JSON.parse(passkHere('report', '--from-store', '--json')) as {
      groups: { agent_version: string; trials: number; ungraded: number }[];
    };
    expect(report.groups.map((g) => [g.agent_version, g.trials, g.ungraded])).toEqual([
      ['refund-agent-v1', 24, 0],
      ['refund-agent-v2', 24, 0],
    ]);
    passkHere('report', 'examples/public-trials/tau_bench.jsonl');
    // the example's v2 breaks must-not-break r1: the gate fails (exit 1), naming it
    const gate = spawnSync(
      process.execPath,
      [
        bin,
        'gate',
        '--baseline',
        'v1',
        '--candidate',
        'v2',
        '--must-not-break',
        'examples/must-not-break.txt',
        'examples/refunds-v1-v2.jsonl',
      ],
      { cwd: dir, env, encoding: 'utf8' },
    );
    expect(gate.status, gate.stderr).toBe(1);
    expect(gate.stdout).toContain('r1');
  }, 300_000);

  it("runs the CI recipe's steps (examples/ci/passk-gate.yml) in a git repository that is not passk's", () => {
    run('git', ['init', '-q'], app);
    mkdirSync(join(app, 'evals'));
    mkdirSync(join(app, 'agents'));
    cpSync(join(ROOT, 'examples', 'refund-agent', 'refunds.jsonl'), join(app, 'evals', 'refunds.jsonl'));
    const agent = (version: string) =>
      `export const meta = { version: '${version}' };\n` +
      "export default async (input) => (input.days_since_purchase <= 30 && input.receipt === 'yes' ? 'approve' : 'deny');\n";
    writeFileSync(join(app, 'agents', 'baseline.mjs'), agent('policy-v1'));
    writeFileSync(join(app, 'agents', 'candidate.mjs'), agent('policy-v2'));
    const workflow = YAML.parse(readFileSync(join(ROOT, 'examples', 'ci', 'passk-gate.yml'), 'utf8')) as {
      env: Record<string, string>;
      jobs: { gate: { steps: { name?: string; run?: string; uses?: string }[] } };
    };
    expect(workflow.env).toMatchObject({
      DATASET: 'evals/refunds.jsonl',
      BASELINE_AGENT: 'agents/baseline.mjs',
      CANDIDATE_AGENT: 'agents/candidate.mjs',
    });
    const steps = workflow.jobs.gate.steps.filter((st) => st.run !== undefined);
    // `npm ci` installs passk from the repository's devDependencies: here beforeAll installed the tarball instead;
    // posting the comment needs GitHub (gh and a token). Every other step runs as written.
    expect(steps.map((st) => st.run!.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'npm ci',
      'npx passk',
      'npx passk',
      '# the',
      'gh pr',
      'exit "${{',
    ]);
    const output = join(work, 'github_output');
    writeFileSync(output, '');
    const stepEnv = { ...env, ...workflow.env, GITHUB_OUTPUT: output };
    for (const step of steps.filter((st) => st.run!.trim() !== 'npm ci' && !st.run!.startsWith('gh '))) {
      const outputs = Object.fromEntries(
        readFileSync(output, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('=') as [string, string]),
      );
      const script = step.run!.replace('${{ steps.gate.outputs.exit }}', outputs.exit ?? '');
      execFileSync('bash', ['-e', '-c', script], { cwd: app, env: stepEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    }
    // the gate was decided by the processors (exit 0), the verdict is Markdown, and the store's verdict agrees
    expect(readFileSync(output, 'utf8')).toBe('exit=0\n');
    expect(readFileSync(join(app, 'verdict.md'), 'utf8')).toMatch(
      /^## GATE PASS: candidate policy-v2 against baseline policy-v1/m,
    );
    expect(JSON.parse(readFileSync(join(app, 'verdict.json'), 'utf8'))).toMatchObject({ verdict: 'pass' });
    expect(existsSync(join(app, '.passk'))).toBe(true);
  });
});
