import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PRODUCER_VERSION } from '../../producers/version.ts';

/**
 * The repository stands on its own: no file points at documents or paths outside it, and the package's version
 * has one source, package.json.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', '.git', '.local-stack', '.passk', '.reports', 'tmp', 'coverage']);

const textFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name) || name.startsWith('.tmp-')) return [];
    const path = join(dir, name);
    const s = statSync(path);
    if (s.isDirectory()) return textFiles(path);
    if (s.size > 2_000_000 || name === 'package-lock.json') return [];
    const text = readFileSync(path);
    return text.includes(0) ? [] : [path];
  });

const files = textFiles(root);
const offending = (pattern: RegExp) =>
  files.filter((f) => pattern.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));

describe('the repository', () => {
  it('names no file outside it: no shared design notes, no checkout path of a machine', () => {
    expect(files.length).toBeGreaterThan(400);
    // spelled in parts, so that this file does not match itself
    const outside = new RegExp(['\\b(STYLE', 'DESIGN)\\.md\\b', '|/wo', 'rk/', '|\\.\\./sha', 'red/'].join(''));
    expect(offending(outside)).toEqual([]);
  });

  it("has one version source: package.json's, which every event's producer field carries", () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(PRODUCER_VERSION).toBe(pkg.version);
    const literal = new RegExp(`['"\`]${pkg.version.replaceAll('.', '\\.')}['"\`]`);
    expect(offending(literal).filter((f) => /\.(ts|mts|js|mjs|py)$/.test(f))).toEqual([]);
  });
});
