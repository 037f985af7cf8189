// Finds the Chromium the browser tests drive, the way users have one, in this order:
//   1. Playwright's own browsers (`npx playwright-core install chromium`), when installed;
//   2. PASSK_CHROMIUM, a path to a Chromium or Chrome executable;
//   3. /usr/bin/chromium, then chromium-browser (Debian, Ubuntu, Fedora packages);
// and, only from `npm test` (deploy/test/run.mjs), where none is found and the user is root on a Debian-like
// system, installs Debian's `chromium` with apt-get. Otherwise the browser tests fail with HOW_TO_GET_ONE.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

export const HOW_TO_GET_ONE =
  "No Chromium for the browser tests: run `npx playwright-core install chromium`, or set PASSK_CHROMIUM=/path/to/chromium, or install your distribution's `chromium` package (Debian: `sudo apt-get install chromium`).";

const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Playwright's managed Chromium for the installed playwright-core, or undefined. */
export const playwrightChromium = () => {
  try {
    const { chromium } = createRequire(import.meta.url)('playwright-core');
    return chromium.executablePath();
  } catch {
    return undefined;
  }
};

const onPath = (name, env) =>
  (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name));

/**
 * The first Chromium found, with where it came from; null when there is none. Collaborators are passed in so the
 * order can be tested without touching the machine.
 * @returns {{ path: string, source: string } | null}
 */
export const findChromium = ({
  env = process.env,
  isExecutable = executable,
  playwright = playwrightChromium,
} = {}) => {
  const managed = playwright();
  if (managed && isExecutable(managed)) return { path: managed, source: "Playwright's own browser" };
  if (env.PASSK_CHROMIUM) {
    if (isExecutable(env.PASSK_CHROMIUM)) return { path: env.PASSK_CHROMIUM, source: 'PASSK_CHROMIUM' };
    throw new Error(`PASSK_CHROMIUM=${env.PASSK_CHROMIUM} is not an executable file. ${HOW_TO_GET_ONE}`);
  }
  const candidates = [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    ...onPath('chromium', env),
    ...onPath('chromium-browser', env),
  ];
  for (const path of candidates) if (isExecutable(path)) return { path, source: 'system chromium' };
  return null;
};

/** True where `apt-get install chromium` can work: root, on Debian or a derivative. */
export const canInstallDebianChromium = ({ uid = process.getuid?.(), exists = existsSync } = {}) =>
  uid === 0 && exists('/etc/debian_version') && exists('/usr/bin/apt-get');

/** Installs Debian packages with apt-get (root, Debian); returns whether it succeeded. Output goes to stderr. */
export const aptInstall = (packages) => {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (update.status !== 0) return false;
  const install = spawnSync('apt-get', ['install', '-y', '-qq', ...packages], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  return install.status === 0;
};

/** Installs Debian's chromium; returns whether it succeeded. Output goes to stderr. */
export const installDebianChromium = () => {
  console.error("No Chromium found: installing Debian's chromium (apt-get install chromium) for the browser tests…");
  return aptInstall(['chromium']);
};
