import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The source tree's import graph, static imports, re-exports and lazy `import()` alike (TypeScript's own scanner,
 * `preProcessFile`), between the repository's files: it has no cycle. A cycle is a module that can be half-loaded
 * when another reads it, and a sign that two rooms of the house each think they own the other.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', 'coverage']);
const SOURCE = /\.(ts|mts|js|mjs)$/;

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name) || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });

type Graph = Map<string, string[]>;

/** Each file's imports of other files of the tree (package imports are not edges: they cannot close a cycle here). */
const importGraph = (): Graph => {
  const files = sourceFiles(root).map((f) => relative(root, f));
  const known = new Set(files);
  const graph: Graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const deps = importedFiles
      .map((i) => i.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(root, resolve(root, dirname(file), spec)))
      .filter((dep) => known.has(dep));
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
};

/** The graph's cycles, as its strongly connected components of more than one file or with a self-import (Tarjan). */
const cycles = (graph: Graph): string[][] => {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
};

describe('the import graph', () => {
  const graph = importGraph();

  it('has no cycle, lazy imports included', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('sees lazy imports and re-exports as edges', () => {
    expect(graph.size).toBeGreaterThan(300);
    // cli/commands/index.ts loads every command with import(), and nothing else
    expect(graph.get('cli/commands/index.ts')).toContain('cli/commands/report.ts');
    expect(graph.get('index.ts')!.length).toBeGreaterThan(5);
  });

  it('finds a planted cycle, however long', () => {
    const planted: Graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(cycles(planted)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it('keeps the CLI manifest out of the commands: they import neither it nor their loader', () => {
    const commands = [...graph.keys()].filter((f) => f.startsWith('cli/commands/') && f !== 'cli/commands/index.ts');
    expect(commands.length).toBeGreaterThan(15);
    for (const file of commands)
      expect(graph.get(file), file).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^cli\/(manifest|commands\/index)\.ts$/)]),
      );
    expect(graph.get('cli/manifest.ts')).toEqual([]);
  });
});

describe('exit codes', () => {
  it('are all named in EXIT: no command sets a number of its own', () => {
    const cli = sourceFiles(join(root, 'cli')).filter((f) => !f.includes('.test.'));
    const literal = /process\.exit\(\s*\d|process\.exitCode\s*=\s*\d/;
    const offenders = cli.filter((f) => literal.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });
});
