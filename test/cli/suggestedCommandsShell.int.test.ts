import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { passk, ROOT } from '../browser/processes.ts';

/**
 * Every command passk suggests is valid shell as printed: the arguments given to `passkCommand` / `command` in the
 * source, each `${…}` standing for one word (the values are quoted by quoteArg), must pass `bash -n`. Before,
 * `dataset publish` printed `next: npx passk run … --agent <agent>`: pasted, bash read `<agent>` as a redirection
 * ("syntax error near unexpected token `newline'").
 */
const SOURCES = ['cli', 'schemas', 'producers', 'web', 'deploy', 'demo'];
const CALL = /\b(?:passkCommand|plainPasskCommand|command)\(\s*(?=['"`])/g;

const tsFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' || d.name === 'dist' ? [] : tsFiles(path);
    return d.name.endsWith('.ts') && !d.name.includes('.test.') ? [path] : [];
  });

/** The literal starting at `at` (a quote), with each template substitution as the word X. */
const literalAt = (src: string, at: number): string => {
  const quote = src[at]!;
  let out = '';
  for (let i = at + 1; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') out += src[++i];
    else if (c === quote) return out;
    else if (quote === '`' && c === '$' && src[i + 1] === '{') {
      let depth = 1;
      for (i += 2; depth > 0; i++) depth += src[i] === '{' ? 1 : src[i] === '}' ? -1 : 0;
      i--;
      out += 'X';
    } else out += c;
  }
  throw new Error(`unterminated literal at ${at}`);
};

const suggested = SOURCES.flatMap(tsFiles).flatMap((file) => {
  const src = readFileSync(join(ROOT, file), 'utf8');
  return [...src.matchAll(CALL)].map((m) => ({ file, args: literalAt(src, m.index + m[0].length) }));
});

describe('every command passk suggests', () => {
  it('is found in the source', () => {
    expect(suggested.length).toBeGreaterThan(50);
    expect(suggested.map((s) => s.args)).toContain('process --until-caught-up');
  });
  it('passes bash -n as printed', () => {
    const bad = suggested.filter(({ args }) => {
      try {
        execFileSync('bash', ['-n', '-c', `npx passk ${args}`], { stdio: 'pipe' });
        return false;
      } catch {
        return true;
      }
    });
    expect(bad).toEqual([]);
  });
});

describe('a placeholder left in a suggested command', () => {
  it('fails clearly: review --confirm refuses an unfilled <answer>', async () => {
    const r = await passk(
      ['review', '--confirm', 't-1', '--expected', '<answer>', '--dataset', 'refunds', '--reviewer', 'ana'],
      { cwd: tmpdir(), env: { NO_COLOR: '1' } },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--expected <answer> is a placeholder');
  });
});
