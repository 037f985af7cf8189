import { spawn } from 'node:child_process';

/**
 * Opens a URL in the user's browser (`--open`): `open` on macOS, `start` on Windows, `xdg-open` elsewhere, detached.
 * Resolves with why it could not (no opener on this machine), or undefined once the opener has started.
 */
export const openBrowser = (url: string): Promise<string | undefined> => {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.once('error', (e: NodeJS.ErrnoException) =>
      resolve(e.code === 'ENOENT' ? `${command} is not installed` : e.message),
    );
    child.once('spawn', () => {
      child.unref();
      resolve(undefined);
    });
  });
};
