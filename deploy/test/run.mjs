#!/usr/bin/env node
// The README's test command (`npm test`): every test, unit and integration, on a fresh machine.
// Integration tests bring up their own Kafka + schema registry (see test/setup/stack.ts).
// Ends with one plain line, `N passed, M failed`, counted from vitest's JSON report.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  aptInstall,
  canInstallDebianChromium,
  findChromium,
  HOW_TO_GET_ONE,
  installDebianChromium,
} from './chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const reportDir = join(root, '.reports');
const report = join(reportDir, 'vitest.json');
mkdirSync(reportDir, { recursive: true });
rmSync(report, { force: true });

// The browser tests' Chromium (deploy/test/chromium.mjs), found once and handed to them as PASSK_CHROMIUM. Where there is
// none, root on Debian gets Debian's chromium; anyone else gets one line saying how, and the browser tests fail.
let browser = findChromium();
if (!browser && canInstallDebianChromium()) browser = installDebianChromium() ? findChromium() : null;
if (browser) console.error(`Browser tests: ${browser.path} (${browser.source})`);
else console.error(HOW_TO_GET_ONE);

// The fault campaign's tools (test/faults: network namespaces, veth, nftables drops): root on Debian gets what is
// missing with apt; elsewhere the campaign test fails naming what it needs.
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const faultTools = [
  ['ip', 'iproute2'],
  ['nft', 'nftables'],
].filter(([cmd]) => !onPath(cmd));
if (faultTools.length > 0 && canInstallDebianChromium()) {
  console.error(`Fault tests: installing ${faultTools.map(([, pkg]) => pkg).join(', ')} (apt-get)…`);
  aptInstall(faultTools.map(([, pkg]) => pkg));
}

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      ...(browser ? { PASSK_CHROMIUM: browser.path } : {}),
    },
  },
);

let passed = 0;
let failed = 0;
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests ?? 0;
  // A file that failed outside its tests (it did not load, or a hook threw and its tests were
  // skipped) counts as one failure.
  const failedOutsideTests = (json.testResults ?? []).filter(
    (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length;
  failed = (json.numFailedTests ?? 0) + failedOutsideTests;
} else {
  failed = 1;
}
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // vitest failed outside any test (setup, unhandled error)
console.log(`${passed} passed, ${failed} failed`);
process.exit(code);
