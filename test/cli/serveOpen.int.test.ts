import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { passkServer } from '../browser/processes.ts';

/**
 * `passk serve --open` hands the dashboard's link to the system opener (xdg-open on Linux, open on macOS). The opener here is a
 * script on PATH that writes down the URL it was given, so the test sees exactly what a browser would be asked to open.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('passk serve --open', () => {
  it('opens the printed URL through the system opener', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const opened = join(dir, 'opened.txt');
    for (const opener of ['xdg-open', 'open']) {
      writeFileSync(join(bin, opener), `#!/bin/sh\nprintf '%s' "$1" > "${opened}"\n`);
      chmodSync(join(bin, opener), 0o755);
    }
    const server = await passkServer(
      ['--data-dir', join(dir, 'data'), 'serve', '--no-process', '--port', '0', '--open'],
      (line) => /passk dashboard: (http\S+)/.exec(line)?.[1],
      120_000,
      { PATH: `${bin}:${process.env.PATH ?? ''}`, NO_COLOR: '1' },
    );
    try {
      for (let i = 0; i < 100 && !existsSync(opened); i++) await new Promise((r) => setTimeout(r, 100));
      // an empty store has no gate yet, so the link is the dashboard itself
      expect(readFileSync(opened, 'utf8')).toBe(server.value);
    } finally {
      await server.stop();
    }
  });
});
