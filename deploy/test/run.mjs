#!/usr/bin/env node
// The README's test command (`npm test`): every tier (vitest.config.ts) on a fresh machine, the tiers that do not share
// a resource side by side: the fault campaign (its own cluster; it mostly waits on held faults); the Kafka files (one
// broker, one file at a time), then a few int files, two at a time (INT_AFTER_KAFKA); the unit tier, one file at a
// time (it is on no lane's critical path: 3 minutes of 2 workers after the Kafka files were 3 minutes of the suite's
// wall); and the int and browser files, two at a time, the longest lane, from the start (it used to wait for the
// unit tier: 2-3 minutes of every run's wall time). Before the lanes start, the sources are compiled once
// (deploy/test/cliBuild.mjs, ~2 s) for the `node bin/passk.mjs …` children of the Kafka, int and browser files: each
// ran tsx's loader, ~0.4-0.65 s of CPU a start, hundreds of starts (docs/performance.md, "The tests' CLI build").
// `npm test -- <vitest args>` runs vitest once with those arguments instead (one file: `npm test -- path/to/file`).
// Prints the slowest 10 files and the skipped tests with their reasons, then one plain last line,
// `N passed, M failed, K skipped`, counted from vitest's JSON reports.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import {
  aptInstall,
  canInstallDebianChromium,
  findChromium,
  HOW_TO_GET_ONE,
  installDebianChromium,
} from './chromium.mjs';
import { buildCli, removeCliBuild } from './cliBuild.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const reportDir = join(root, '.reports');
mkdirSync(reportDir, { recursive: true });

// The browser tests' Chromium (deploy/test/chromium.mjs), found once and handed to them as PASSK_CHROMIUM. Where there is
// none, root on Debian gets Debian's chromium; anyone else gets one line saying how, and the browser tests fail.
let browser = findChromium();
if (!browser && canInstallDebianChromium()) browser = installDebianChromium() ? findChromium() : null;
if (browser) console.error(`Browser tests: ${browser.path} (${browser.source})`);
else console.error(HOW_TO_GET_ONE);

// The fault campaign's tools (test/faults: network namespaces, veth, nftables drops) and the metrics tests' Prometheus:
// root on Debian gets what is missing with apt; elsewhere the tests that need them fail naming what they need.
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const tools = [
  ['ip', 'iproute2'],
  ['nft', 'nftables'],
  ['prometheus', 'prometheus'],
].filter(([cmd]) => !onPath(cmd));
if (tools.length > 0 && canInstallDebianChromium()) {
  console.error(`Installing ${tools.map(([, pkg]) => pkg).join(', ')} (apt-get)…`);
  aptInstall(tools.map(([, pkg]) => pkg));
}

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const env = {
  ...process.env,
  KAFKAJS_NO_PARTITIONER_WARNING: '1',
  ...(browser ? { PASSK_CHROMIUM: browser.path } : {}),
};

/** One vitest run; its output goes to the terminal with a `[name]` prefix when lanes run side by side. */
const lane = (name, args, { prefix, laneEnv = {} }) =>
  new Promise((resolve) => {
    const report = join(reportDir, `vitest-${name}.json`);
    rmSync(report, { force: true });
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...args],
      { cwd: root, env: { ...env, ...laneEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const log = createWriteStream(join(reportDir, `vitest-${name}.log`));
    const relay = (to) => {
      let rest = '';
      return (chunk) => {
        log.write(chunk);
        const text = rest + chunk.toString();
        const lines = text.split('\n');
        rest = lines.pop();
        for (const line of lines) to.write(prefix ? `[${name}] ${line}\n` : `${line}\n`);
      };
    };
    child.stdout.on('data', relay(process.stdout));
    child.stderr.on('data', relay(process.stderr));
    child.on('close', (code) => {
      log.end();
      resolve({ name, code: code ?? 1, seconds: (Date.now() - started) / 1000, report });
    });
  });

/**
 * Int files run in the Kafka lane after the unit tier instead of in the local lane: that lane ends about 5 minutes
 * before the local one (last quiet run: Kafka files + unit 16m27s, int + browser 21m16s), so moving about 4 minutes of
 * int files evens the two. Files that use neither Kafka nor Chromium, and need nothing the local lane sets up.
 * With the first two moved, the next quiet runs still ended the Kafka lane (13m30 + unit 2m24 + this tail 3m14) about
 * 1m30 before the local one (20m40), so producers.review.int follows: about 20 s of CPU (cpuacct, the file alone),
 * which the tail ran in its one worker while the local lane's two shared the rest. The suite is CPU-bound on 2 cores:
 * moving a file ends the lanes closer together, it saves no CPU.
 * The next quiet CI run (wall 22m00s): faults 18m14, Kafka 15m04 → unit 3m06 → tail 2m30 (20m40), local 21m52. Now
 * the unit tier runs beside the lanes from the start, in one worker (its CPU is spent as before, at the start rather
 * than in minutes 15-18, when the same lanes ran beside it), the tail follows the Kafka files at ~15m04 in two workers
 * (the broker's worker is free by then), and width.int (1m56) and retract.int (1m51) join it. In worker-minutes: the
 * local lane held 2 × 21m52 = 43m44, of which importToolStream.int's 4m11 shrinks by about 2 minutes (its five
 * imports side by side; the τ-bench test's import and rerun remain one after another) and readmeCommands.int's by about
 * 30 s (one `passk demo` run fewer): 41m14. Moving m worker-minutes evens the lanes when
 * (41m14 - m) / 2 = 15m04 + (2m30 + m) / 2, m ≈ 4m: width + retract (3m47) give local ≈ (41m14 - 3m47) / 2 = 18m44 and
 * Kafka + tail ≈ 15m04 + (2m30 + 3m47) / 2 = 18m13, against 21m52 and 20m40 (a wall of ~18m45 rather than 22m00).
 * Since then the local lane gained the row-state store tests; the next CI run (load 9-26, helpers running): faults
 * 17m07, Kafka 16m32 → tail 3m54 (20m26), local 24m21 (2 × 24m21 = 48m42 worker-minutes, 44m23 of it in test
 * bodies). Evening them takes m ≈ 24m21 - 20m26 ≈ 3m55 of worker time: explorerFromState.int (2m36) and
 * rowCountsFromState.int (1m51) join the tail (chDB in temp directories; neither Kafka nor Chromium): local ≈
 * (48m42 - 4m27) / 2 = 22m08, Kafka + tail ≈ 16m32 + (7m48 + 4m27) / 2 = 22m40.
 */
const INT_AFTER_KAFKA = [
  'test/cli/storeRebuild.int.test.ts',
  'test/integration/importStream.int.test.ts',
  'test/integration/producers.review.int.test.ts',
  'test/cli/width.int.test.ts',
  'test/cli/retract.int.test.ts',
  'test/integration/explorerFromState.int.test.ts',
  'test/integration/rowCountsFromState.int.test.ts',
];

const userArgs = process.argv.slice(2);
const started = Date.now();
const results = [];
if (userArgs.length > 0) {
  results.push(await lane('run', userArgs, { prefix: false }));
} else {
  // The fault campaign's cluster and the Kafka lane's local stack run the binaries deploy/local/fetch.sh puts in
  // .local-stack (Maven Central). Fetched once here, before the lanes start side by side: a fresh clone has none, and
  // the campaign would not wait for the Kafka lane's own fetch. Idempotent; a failure is left to the lanes to report.
  console.error('Local stack binaries (deploy/local/fetch.sh)…');
  spawnSync('bash', [join(root, 'deploy', 'local', 'fetch.sh')], { stdio: 'inherit' });
  // One build of the CLI for every lane's `node bin/passk.mjs …` children (deploy/test/cliBuild.mjs), not one per
  // vitest run (test/setup/cliBuild.ts). The fault campaign's processes keep running the sources under tsx.
  const cliBuild = await buildCli();
  const built = { PASSK_CLI_BUILD: cliBuild };
  results.push(
    ...(await Promise.all([
      lane('faults', ['--project', 'faults'], { prefix: true }),
      (async () => {
        const kafka = await lane('kafka', ['--project', 'kafka'], { prefix: true, laneEnv: built });
        const tail = await lane('int-tail', ['--project', 'int', '--maxWorkers', '2', ...INT_AFTER_KAFKA], {
          prefix: true,
          laneEnv: built,
        });
        return [kafka, tail];
      })(),
      lane('unit', ['--project', 'unit', '--maxWorkers', '1'], { prefix: true }),
      // vitest's --exclude does not reach a project's own file list: vitest.config.ts reads PASSK_TEST_EXCLUDE
      lane('local', ['--project', 'int', '--project', 'browser', '--maxWorkers', '2'], {
        prefix: true,
        laneEnv: { ...built, PASSK_TEST_EXCLUDE: INT_AFTER_KAFKA.join(',') },
      }),
    ]).then((r) => r.flat())),
  );
  removeCliBuild(cliBuild);
}

let passed = 0;
let failed = 0;
let skipped = 0;
const files = [];
const skips = new Map();
const failures = [];
for (const r of results) {
  if (!existsSync(r.report)) {
    console.error(`${r.name}: vitest wrote no report (exit ${r.code}); counted as one failure`);
    failed += 1;
    continue;
  }
  const json = JSON.parse(readFileSync(r.report, 'utf8'));
  passed += json.numPassedTests ?? 0;
  skipped += (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  // A file that failed outside its tests (it did not load, or a hook threw and its tests were skipped) counts as one.
  const failedOutsideTests = (json.testResults ?? []).filter(
    (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length;
  const laneFailed = (json.numFailedTests ?? 0) + failedOutsideTests;
  failed += laneFailed;
  if (r.code !== 0 && laneFailed === 0) failed += 1; // vitest failed outside any test (setup, unhandled error)
  for (const f of json.testResults ?? []) {
    files.push({ file: relative(root, f.name), ms: (f.endTime ?? 0) - (f.startTime ?? 0), lane: r.name });
    const failedTests = (f.assertionResults ?? []).filter((a) => a.status === 'failed');
    // The first line of each failure, so that the end of a long log says what failed (a CI log is often cut).
    for (const a of failedTests)
      failures.push(
        `${relative(root, f.name)} (${r.name}): ${a.fullName}: ${firstLine(a.failureMessages?.[0], a.duration)}`,
      );
    if (f.status === 'failed' && failedTests.length === 0)
      failures.push(`${relative(root, f.name)} (${r.name}): ${firstLine(f.message) || 'failed outside its tests'}`);
    for (const a of f.assertionResults ?? [])
      if (a.status === 'pending' || a.status === 'skipped' || a.status === 'todo') {
        // The reason is in the title (`… (skipped: why)`), as the tests that skip write it.
        const why = /\(skipped: ((?:[^()]|\([^()]*\))+)\)/.exec(a.fullName)?.[1] ?? `no reason given: ${a.fullName}`;
        const key = `${relative(root, f.name)}: ${why}`;
        skips.set(key, (skips.get(key) ?? 0) + 1);
      }
  }
}

/**
 * The first non-empty line of a failure message, without colours, cut at 300 characters. vitest's JSON report keeps
 * only the stack of a test that ran out of time, whose first line is its placeholder `Error: STACK_TRACE_ERROR`.
 */
function firstLine(message, ms) {
  const plain = stripVTControlCharacters(String(message ?? ''));
  const line = (plain.split('\n').find((l) => l.trim()) ?? '').trim();
  if (line === 'Error: STACK_TRACE_ERROR') return `timed out${ms ? ` after ${(ms / 1000).toFixed(1)} s` : ''}`;
  return line.slice(0, 300);
}

/** A duration as 17m02s (whole seconds, rounded before the split: never 16m60s), or 4.2s under a minute. */
const fmt = (ms) => {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};
/** Words of `text` in lines of at most the terminal's width (80 when it is not a terminal), later lines indented. */
const width = process.stdout.columns || 80;
const wrapped = (text, indent = '    ') => {
  const lines = [];
  const lead = /^ */.exec(text)[0];
  let line = lead;
  for (const word of text.slice(lead.length).split(' ')) {
    if (line.trim() && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = line.trim() ? `${line} ${word}` : line + word;
  }
  return [...lines, line].join('\n');
};
console.log('');
if (files.length > 1) {
  console.log('Slowest files:');
  for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 10))
    console.log(wrapped(`  ${fmt(f.ms).padStart(7)}  ${f.file} (${f.lane})`, '           '));
}
if (results.length > 1)
  console.log(
    wrapped(
      `Lanes: ${results.map((r) => `${r.name} ${fmt(r.seconds * 1000)}`).join(', ')}; wall ${fmt(Date.now() - started)}`,
    ),
  );
if (skipped > 0) {
  console.log(`Skipped, with the reason:`);
  for (const [key, n] of skips) console.log(wrapped(`  ${n} in ${key}`));
}
if (failures.length > 0) {
  console.log('Failed:');
  for (const f of failures) console.log(wrapped(`  ${f}`));
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || results.some((r) => r.code !== 0) ? 1 : 0);
