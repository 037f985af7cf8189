import { Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/manifest.ts';
import { buildProgram, commandIn } from '../../cli/program.ts';

// `passk --help` lists the commands from their outline in cli/manifest.ts instead of loading them (issue #14:
// start-up). The outline must say exactly what the loaded commands would.

describe('the command outline', () => {
  it('gives each loaded command its term and summary', async () => {
    const loaded = await buildProgram([], { outline: false });
    const help = new Help();
    const seen = loaded.commands.map((c) => [c.name(), help.subcommandTerm(c), c.summary()]);
    expect(seen).toEqual(Object.entries(COMMANDS).map(([name, c]) => [name, c.term, c.summary]));
  });

  it('makes the same program help as loading every command', async () => {
    const fast = await buildProgram(['--help']);
    const loaded = await buildProgram(['--help'], { outline: false });
    expect(fast.helpInformation()).toBe(loaded.helpInformation());
    expect(fast.helpInformation()).toContain(COMMANDS.import.summary.slice(0, 30));
  });

  it('loads only the command the arguments name', async () => {
    expect(commandIn(['--width', '80', 'report', 'x.jsonl'])).toBe('report');
    expect(commandIn(['help', 'gate'])).toBe('gate');
    expect(commandIn(['--help'])).toBeUndefined();
    expect(commandIn(['reprot'])).toBeUndefined();
    const program = await buildProgram(['help', 'dataset']);
    expect(program.commands.map((c) => c.name())).toEqual(['dataset']);
    expect(program.commands[0]!.commands.map((c) => c.name())).toContain('publish');
  });
});
