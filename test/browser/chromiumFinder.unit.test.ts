import { describe, expect, it } from 'vitest';
import { canInstallDebianChromium, findChromium, HOW_TO_GET_ONE } from '../../deploy/test/chromium.mjs';

const machine = (executables: string[]) => (path: string) => executables.includes(path);
const PW = '/root/.cache/ms-playwright/chromium-1/chrome-linux64/chrome';

describe('the browser finder (deploy/test/chromium.mjs)', () => {
  it("prefers Playwright's own browser when it is installed", () => {
    const found = findChromium({
      env: { PASSK_CHROMIUM: '/opt/chrome', PATH: '' },
      isExecutable: machine([PW, '/opt/chrome', '/usr/bin/chromium']),
      playwright: () => PW,
    });
    expect(found).toEqual({ path: PW, source: "Playwright's own browser" });
  });

  it('then PASSK_CHROMIUM, then /usr/bin/chromium, then chromium-browser', () => {
    const noPlaywright = () => PW; // reported by playwright-core but not installed
    expect(
      findChromium({
        env: { PASSK_CHROMIUM: '/opt/chrome' },
        isExecutable: machine(['/opt/chrome', '/usr/bin/chromium']),
        playwright: noPlaywright,
      }),
    ).toEqual({ path: '/opt/chrome', source: 'PASSK_CHROMIUM' });
    expect(
      findChromium({
        env: {},
        isExecutable: machine(['/usr/bin/chromium', '/usr/bin/chromium-browser']),
        playwright: noPlaywright,
      }),
    ).toEqual({ path: '/usr/bin/chromium', source: 'system chromium' });
    expect(
      findChromium({ env: {}, isExecutable: machine(['/usr/bin/chromium-browser']), playwright: () => undefined }),
    ).toEqual({ path: '/usr/bin/chromium-browser', source: 'system chromium' });
    expect(
      findChromium({
        env: { PATH: '/snap/bin:/usr/local/bin' },
        isExecutable: machine(['/snap/bin/chromium']),
        playwright: () => undefined,
      }),
    ).toEqual({ path: '/snap/bin/chromium', source: 'system chromium' });
  });

  it('finds nothing on a machine without one, and a PASSK_CHROMIUM that is not there is an error, not a fallback', () => {
    expect(findChromium({ env: { PATH: '/usr/bin' }, isExecutable: machine([]), playwright: () => undefined })).toBe(
      null,
    );
    expect(() =>
      findChromium({ env: { PASSK_CHROMIUM: '/nope' }, isExecutable: machine([]), playwright: () => undefined }),
    ).toThrow('PASSK_CHROMIUM=/nope is not an executable file');
    expect(HOW_TO_GET_ONE).toMatch(/^No Chromium for the browser tests: run `npx playwright-core install chromium`/);
    expect(HOW_TO_GET_ONE).not.toContain('\n');
  });

  it("installs Debian's chromium only as root on a Debian-like system", () => {
    const debian = (p: string) => p === '/etc/debian_version' || p === '/usr/bin/apt-get';
    expect(canInstallDebianChromium({ uid: 0, exists: debian })).toBe(true);
    expect(canInstallDebianChromium({ uid: 1000, exists: debian })).toBe(false);
    expect(canInstallDebianChromium({ uid: 0, exists: () => false })).toBe(false);
  });

  it('on this machine finds an executable Chromium (the browser tests need one; none is a failure)', () => {
    const found = findChromium();
    expect(found, HOW_TO_GET_ONE).not.toBeNull();
  });
});
