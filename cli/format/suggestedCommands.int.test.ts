import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { confirmRunArgs, plainPasskCommand, type RunFiles } from '../../schemas/commandLine.ts';
import { confirmCommands } from '../../web/commands.ts';
import { passkCommand, quoteArg, setCommandGlobals, sourceArgs } from './doc.ts';
import { gateNext, type RuleView } from './gateDoc.ts';
import { renderTerminal } from './render.ts';

/**
 * A suggested command is pasted into a shell (the CLI prints it, the dashboard serves it for copying): whatever a
 * user named a version, suite, dataset, row or file, the shell must read back exactly the arguments passk meant, and
 * run nothing else. Checked with a real POSIX shell (`sh`), in a directory of its own, so that a command substituted,
 * a second command run, a redirection or a glob shows as different arguments or as a file left behind.
 */
const HOSTILE = [
  'v1;echo pwned',
  '$(echo pwned)',
  '`echo pwned`',
  'a b',
  "it's",
  'say "hi"',
  'two\nlines',
  'x && echo pwned',
  'a|cat',
  'a>pwned.txt',
  '*',
  '~',
  '#not a comment',
  '$HOME',
  'back\\slash',
  "'",
  "'\\''",
  '-v',
];

const cwd = mkdtempSync(join(tmpdir(), 'passk-shell-'));
writeFileSync(join(cwd, 'decoy'), ''); // what an unquoted * would expand to
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
afterEach(() => setCommandGlobals({}));

/** The arguments `sh` reads from `command` (continuation lines included), and the files it left behind. */
const argvOf = (command: string): { argv: string[]; left: string[] } => {
  const out = execFileSync('sh', ['-c', `set -- ${command}\nprintf '%s\\0' "$@"`], { cwd, encoding: 'utf8' });
  const left = readdirSync(cwd).filter((f) => f !== 'decoy');
  for (const f of left) rmSync(join(cwd, f), { force: true });
  return { argv: out.split('\0').slice(0, -1), left };
};

const confirmArgv = (o: { version: string; suite?: string; source?: RunFiles; requested?: boolean }): string[] => [
  'run',
  '--dataset',
  o.source?.dataset_path ?? 'ROWS.jsonl',
  '--agent',
  o.source?.agent_spec ?? `AGENT_OF_${o.version}`,
  ...(o.suite === undefined ? [] : ['--suite', o.suite]),
  '--agent-version',
  o.version,
  ...(o.requested ? ['--confirmations'] : ['--confirm', 'suspects.txt', '--extra', '3']),
];

/** The commands of a terminal rendering's `next:` lines, each with its ` \` continuations and quoted line breaks. */
const nextCommands = (out: string): string[] =>
  // colours off: picocolors turns them on when CI is set, as in .ci/run
  stripVTControlCharacters(out)
    .split(/^next: /m)
    .slice(1)
    .map((c) => c.replace(/\n$/, ''));

describe('a suggested command pasted into a POSIX shell', () => {
  it('quotes any string as one word (quoteArg)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 12 })), (s) => {
        fc.pre(!s.includes('\0')); // no argument can hold one
        expect(argvOf(`x ${quoteArg(s)} y`)).toEqual({ argv: ['x', s, 'y'], left: [] });
      }),
      { numRuns: 100 },
    );
  });

  it('runs a confirmation with exactly the version, suite, files and global options it names, CLI and dashboard', () => {
    const source = (i: number): RunFiles => ({
      dataset_path: HOSTILE[(i + 3) % HOSTILE.length]!,
      agent_spec: HOSTILE[(i + 7) % HOSTILE.length]!,
    });
    HOSTILE.forEach((version, i) => {
      const suite = HOSTILE[(i + 1) % HOSTILE.length]!;
      const dataDir = HOSTILE[(i + 5) % HOSTILE.length]!;
      for (const o of [
        { version },
        { version, requested: true },
        { version, suite, source: source(i) },
        { version, suite, source: source(i), requested: true },
      ]) {
        setCommandGlobals({ dataDir });
        expect(argvOf(passkCommand(confirmRunArgs(o)))).toEqual({
          argv: ['npx', 'passk', '--data-dir', dataDir, ...confirmArgv(o)],
          left: [],
        });
      }
      // the dashboard's, for each version of a comparison (its `confirm_commands`)
      const baseline = HOSTILE[(i + 2) % HOSTILE.length]!;
      const served = confirmCommands(
        { suite, baseline_version: baseline, candidate_version: version, run_sources: { [version]: source(i) } },
        plainPasskCommand,
      );
      expect(argvOf(served[baseline]!).argv).toEqual(['npx', 'passk', ...confirmArgv({ version: baseline, suite })]);
      expect(argvOf(served[version]!).argv).toEqual([
        'npx',
        'passk',
        ...confirmArgv({ version, suite, source: source(i) }),
      ]);
    });
  });

  it("after a failing gate: the suspects' ids, both confirmation runs and compare, as printed at any width", () => {
    HOSTILE.forEach((baseline, i) => {
      const candidate = HOSTILE[(i + 1) % HOSTILE.length]!;
      const rows = [HOSTILE[(i + 2) % HOSTILE.length]!, HOSTILE[(i + 4) % HOSTILE.length]!];
      const files = [HOSTILE[(i + 6) % HOSTILE.length]!, 'trials.jsonl'];
      const suites = [HOSTILE[(i + 8) % HOSTILE.length]!];
      const view = {
        verdict: 'fail',
        baseline,
        candidate,
        rules: [],
        must_not_break: rows.map((row_id) => ({ row_id, status: 'broken', outcome: 'unresolved' })),
      } as unknown as RuleView;
      const sources = { [baseline]: { dataset_path: files[0]!, agent_spec: suites[0]! } };
      for (const [source, sourceArgv] of [
        [sourceArgs(files, {}), files],
        [sourceArgs([], { fromStore: true, suite: suites }), ['--from-store', '--suite', suites[0]!]],
      ] as const)
        for (const width of [undefined, 40]) {
          const printed = nextCommands(
            renderTerminal(gateNext(view, source, { suite: suites[0]!, sources }), width ? { width } : {}),
          );
          expect(printed.map(argvOf)).toEqual([
            { argv: ['printf', '%s\\n', ...rows], left: ['suspects.txt'] },
            {
              argv: [
                'npx',
                'passk',
                ...confirmArgv({ version: baseline, suite: suites[0]!, source: sources[baseline] }),
              ],
              left: [],
            },
            { argv: ['npx', 'passk', ...confirmArgv({ version: candidate })], left: [] },
            {
              argv: ['npx', 'passk', 'compare', '--baseline', baseline, '--candidate', candidate, ...sourceArgv],
              left: [],
            },
          ]);
        }
    });
  });
});
