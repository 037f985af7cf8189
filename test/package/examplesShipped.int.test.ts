import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/manifest.ts';
import { passk, ROOT } from '../browser/processes.ts';

/**
 * Every `examples/…` path the README, docs/ or a command's `--help` names is in the npm package, so that a user who
 * installed it finds it (`cp -r node_modules/passk/examples .`, as the README says): the README's five commands and
 * several `--help` examples named files that package.json's `files` left out (a new user's trial). The package's file
 * list is `npm pack --dry-run`'s, without its scripts (no build: only the list matters here).
 */
const EXAMPLE_PATH = /\bexamples\/[\w./-]*\w/g;
const pathsIn = (text: string): string[] => [...text.matchAll(EXAMPLE_PATH)].map((m) => m[0]);

const packed = (): string[] => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [pack] = JSON.parse(out.slice(out.indexOf('['))) as { files: { path: string }[] }[];
  return pack!.files.map((f) => f.path);
};
/** A path the package holds: a file of it, or a directory some of its files are in. */
const missing = (paths: Iterable<string>, files: readonly string[]): string[] =>
  [...new Set(paths)].filter((p) => !files.some((f) => f === p || f.startsWith(`${p}/`))).sort();

describe('the examples the documentation names are in the package', () => {
  const files = packed();

  it('every examples/ path in the README and docs/', () => {
    const docs = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : [])),
    ];
    const named = docs.flatMap((f) => pathsIn(readFileSync(join(ROOT, f), 'utf8')));
    // the README's five commands use the refund agent and its dataset
    expect(named).toContain('examples/refund-agent/agent.ts');
    expect(missing(named, files)).toEqual([]);
  });

  it('no README command names a file of test/, which the package leaves out', () => {
    // `npx passk import test/fixtures/tool-outputs/*.json …` failed in a user's repository (a new user's trial)
    const commands = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```bash\n([\s\S]*?)```/g)].map(
      (m) => m[1]!,
    );
    expect(commands.join('\n')).toContain('npx passk import examples/');
    expect(commands.join('\n').match(/(?<![\w/])test\/[\w./*-]+/g) ?? []).toEqual([]);
    expect(files.some((f) => f.startsWith('test/'))).toBe(false);
  });

  it("every examples/ path in passk's --help and each command's", async () => {
    const helps = await Promise.all([[], ...Object.keys(COMMANDS).map((c) => [c])].map((c) => passk([...c, '--help'])));
    const named = helps.flatMap((h) => pathsIn(h.stdout));
    expect(named).toContain('examples/refund-agent/refunds.jsonl');
    expect(missing(named, files)).toEqual([]);
  });
});
