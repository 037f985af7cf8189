import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { fitEpilog } from '../../cli/format/helpText.ts';
import { buildProgram } from '../../cli/program.ts';

// Every command's --help, its examples and exit codes included, fits the terminal, and each example command, broken
// over lines with ` \`, is still the same shell command.

const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];

/** The whole help of `cmd` as printed at `width` columns. */
const helpAt = (cmd: Command, width: number): string => {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => width });
  cmd.outputHelp();
  return out;
};

/** The example commands of a help text: continuations joined, comments dropped, spaces normalized. */
const examples = (help: string): string[] => {
  const out: string[] = [];
  let open = false;
  for (const line of help.split('\n')) {
    if (open) out[out.length - 1] += ` ${line}`;
    else if (/^ {2}(npx passk|passk|[A-Z_]+=)/.test(line)) out.push(line);
    else continue;
    open = line.endsWith(' \\');
  }
  return out.map((l) =>
    l
      .replace(/ \\ /g, ' ')
      .replace(/\s{2,}# .*$/, '')
      .replace(/\s+/g, ' ')
      .trim(),
  );
};

const words = (s: string): string[] => s.split(/\s+/).filter(Boolean);

describe('--help at the terminal width', () => {
  it.each([80, 100])('has no line wider than %i columns, in any command', async (width) => {
    const program = await buildProgram([], { outline: false });
    const wide: string[] = [];
    for (const cmd of everyCommand(program)) {
      const help = helpAt(cmd, width);
      expect(help, cmd.name()).toContain('Usage:');
      for (const line of help.split('\n')) if ([...line].length > width) wide.push(`${cmd.name()}: ${line}`);
    }
    expect(wide).toEqual([]);
  });

  it('keeps every example the same command, and every word of the prose, when it wraps', async () => {
    const program = await buildProgram([], { outline: false });
    let broken = 0;
    for (const cmd of everyCommand(program)) {
      const full = helpAt(cmd, 400);
      const narrow = helpAt(cmd, 60);
      expect(examples(narrow), cmd.name()).toEqual(examples(full));
      expect(words(narrow), cmd.name()).toEqual(expect.arrayContaining(words(full).filter((w) => w !== '\\')));
      broken += (narrow.match(/ \\\n/g) ?? []).length;
    }
    // the examples did need breaking at 60 columns: the check above saw broken commands
    expect(broken).toBeGreaterThan(10);
  });

  it('breaks a command between flags, with ` \\`, and keeps a flag with its value', () => {
    const text = `Examples:
  passk run --dataset rows.jsonl --agent 'cmd:python3 agent.py' --k 5   # five attempts a row`;
    expect(fitEpilog(text, 44).split('\n')).toEqual([
      'Examples:',
      '  # five attempts a row',
      '  npx passk run --dataset rows.jsonl \\',
      "    --agent 'cmd:python3 agent.py' --k 5",
    ]);
    // it fits: left as written, comment and all, shown as a user runs it (npx passk)
    expect(fitEpilog(text, 100)).toBe(text.replace('  passk run', '  npx passk run'));
  });

  it('joins a prose line with its continuations, then wraps it, a label starting each line', () => {
    const text = `JSON: {a, b,
  c}. Importing twice records
nothing new.
Exit codes: 0 ok, 2 bad input.`;
    expect(fitEpilog(text, 30).split('\n')).toEqual([
      'JSON: {a, b, c}. Importing',
      '  twice records nothing new.',
      'Exit codes: 0 ok, 2 bad input.',
    ]);
  });

  it('names only files the repository ships, or says where a file comes from (copied in a fresh directory)', async () => {
    // A new user copying the examples after `npx passk demo` met "trials.jsonl: no such file" and the like: an example
    // names a file of examples/ (packed, test/package/examplesShipped) or the help says it stands for the user's own.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const ships = (path: string): boolean =>
      path.includes('*')
        ? existsSync(join(root, dirname(path))) &&
          readdirSync(join(root, dirname(path))).some((f) =>
            new RegExp(`^${path.split('/').at(-1)!.replace(/\./g, '\\.').replace(/\*/g, '.*')}$`).test(f),
          )
        : existsSync(join(root, path));
    const program = await buildProgram([], { outline: false });
    const unexplained: string[] = [];
    for (const cmd of everyCommand(program)) {
      const help = helpAt(cmd, 400);
      // the prose after the examples (at 400 columns a paragraph is one line; examples are indented)
      const notes = help
        .slice(help.indexOf('\nExamples:\n'))
        .split('\n')
        .filter((l) => !l.startsWith(' '))
        .join('\n');
      for (const example of examples(help)) {
        const tokens = words(example.replace(/['"]/g, ' ').replace(/^.*?passk /, ''));
        tokens.forEach((t, i) => {
          // what the command writes, and data directories, are not inputs
          if (['>', '--out', '--data-dir'].includes(tokens[i - 1] ?? '') || !/\.(jsonl|json|csv|txt|md|ts|py)$/.test(t))
            return;
          if (
            ships(t) ||
            notes.includes(`${t} `) ||
            notes.includes(`${t},`) ||
            notes.includes(` .${t.split('.').at(-1)} `)
          )
            return;
          unexplained.push(`${cmd.name()}: ${t} in ${example}`);
        });
      }
    }
    expect(unexplained).toEqual([]);
  });
});
