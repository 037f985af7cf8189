import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The frontend: plain ES modules in `client/` (in the installed package, one bundle: deploy/build/build.mjs), plus the charting library (uPlot) served from
 * node_modules. Only files under those two folders can be read, and only with known extensions.
 */
const WEB = join(dirname(fileURLToPath(import.meta.url)), 'client');
const UPLOT = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const VENDOR: Record<string, string> = {
  '/vendor/uPlot.esm.js': join(UPLOT, 'dist', 'uPlot.esm.js'),
  '/vendor/uPlot.min.css': join(UPLOT, 'dist', 'uPlot.min.css'),
};

/** The file behind a URL path, or undefined when there is none (or the path tries to leave `client/`). */
export const resolveStatic = (pathname: string): string | undefined => {
  if (pathname === '/' || pathname === '/index.html') return join(WEB, 'index.html');
  const vendor = VENDOR[pathname];
  if (vendor) return vendor;
  if (!pathname.startsWith('/static/')) return undefined;
  let rel: string;
  try {
    rel = decodeURIComponent(pathname.slice('/static/'.length));
  } catch {
    return undefined;
  }
  const file = normalize(join(WEB, rel));
  if (!file.startsWith(WEB + sep) || !(extname(file) in TYPES)) return undefined;
  return file;
};

export const readStatic = async (file: string): Promise<{ body: Buffer; type: string } | undefined> => {
  try {
    return { body: await readFile(file), type: TYPES[extname(file)] ?? 'application/octet-stream' };
  } catch {
    return undefined;
  }
};
