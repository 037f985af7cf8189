import { afterEach, describe, expect, it } from 'vitest';
import { isLeftBuild } from '../../deploy/test/cliBuild.mjs';
import setup from './cliBuild.ts';

/**
 * The tests' CLI build (test/setup/cliBuild.ts, deploy/test/cliBuild.mjs). It is made once per vitest process, so in
 * watch mode a rerun after an edit started children on the code before the edit (and an inherited PASSK_CLI_BUILD was
 * kept as well): tests could pass on stale code. And the cleanup of builds left by killed runs took a pid from another
 * pid namespace (a container sharing the checkout) for ended, removing a build still in use there.
 */
const inherited = process.env.PASSK_CLI_BUILD;
afterEach(() => {
  if (inherited === undefined) delete process.env.PASSK_CLI_BUILD;
  else process.env.PASSK_CLI_BUILD = inherited;
});

describe('the global setup in watch mode', () => {
  const watch = { vitest: { config: { watch: true } } } as Parameters<typeof setup>[0];

  it('drops an inherited build: the children run the sources, as edited', async () => {
    process.env.PASSK_CLI_BUILD = '/some/older/build';
    const teardown = await setup(watch);
    expect(process.env.PASSK_CLI_BUILD).toBeUndefined();
    teardown();
    expect(process.env.PASSK_CLI_BUILD).toBeUndefined();
  });

  it('makes no build of its own', async () => {
    delete process.env.PASSK_CLI_BUILD;
    const teardown = await setup(watch);
    expect(process.env.PASSK_CLI_BUILD).toBeUndefined();
    teardown();
  });
});

describe('which builds under .reports/ are left by ended runs', () => {
  const now = Date.UTC(2026, 11, 7, 3, 0);
  const hour = 3600_000;
  const ns = 4026531836;
  const alive = (pid: number) => pid === 100;

  it.each([
    ['its pid ended, this namespace', `cli-build-200-ns${ns}-${now - hour}`, true],
    ['its pid running, this namespace', `cli-build-100-ns${ns}-${now - hour}`, false],
    ['another pid namespace, its pid not running here, an hour old', `cli-build-200-ns4026532000-${now - hour}`, false],
    ['another pid namespace, two days old', `cli-build-200-ns4026532000-${now - 48 * hour}`, true],
    ['the older naming (no namespace), its pid not running here', `cli-build-200-${now - hour}`, false],
    ['the older naming, two days old', `cli-build-200-${now - 48 * hour}`, true],
    ['its pid running, but two days old', `cli-build-100-ns${ns}-${now - 48 * hour}`, true],
    ['not a build', 'vitest-local.log', false],
  ])('%s', (_, name, left) => {
    expect(isLeftBuild(name, now, ns, alive)).toBe(left);
  });
});
