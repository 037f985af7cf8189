import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { nextCommand, passkCommand, setCommandGlobals } from './doc.ts';
import { asRun } from './helpText.ts';
import { renderTerminal } from './render.ts';

/**
 * Every command the CLI suggests is shown as `npx passk …` (issue 32, item 6: a bare `passk` is "command not found"
 * in a repository that installed it) and runs as printed: the global options that chose the log and store are
 * repeated, and a command too wide for the terminal is broken with ` \` so that it still pastes as one.
 */
afterEach(() => setCommandGlobals({}));

/** The commands of `next:` lines, their ` \` continuations joined. */
const commandsOf = (out: string): string[] =>
  // colours off: picocolors turns them on when CI is set, as in .ci/run
  stripVTControlCharacters(out)
    .replace(/ \\\n\s+/g, ' ')
    .split('\n')
    .flatMap((l) => (l.startsWith('next: ') ? [l.slice('next: '.length)] : []));

describe('a suggested command', () => {
  it('is npx passk, with the global options this invocation was given, quoted for a shell', () => {
    expect(passkCommand('process --until-caught-up')).toBe('npx passk process --until-caught-up');
    setCommandGlobals({ dataDir: '/tmp/my data', backend: 'embedded', config: 'passk.yaml' });
    expect(passkCommand('report --from-store')).toBe(
      "npx passk --config passk.yaml --backend embedded --data-dir '/tmp/my data' report --from-store",
    );
  });

  it('is printed one a line after next:, and broken with ` \\` where wider than the terminal', () => {
    setCommandGlobals({ dataDir: '/tmp/passk-suggested-0123456789' });
    const commands = [passkCommand('process --until-caught-up'), passkCommand('report --from-store --suite refunds')];
    const out = renderTerminal([nextCommand(commands, 'then read the numbers')], { width: 50 });
    for (const line of out.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    expect(commandsOf(out)).toEqual(commands);
    expect(out).toContain('# then read the numbers');
    // wide enough: one line each, the note a shell comment after the last
    expect(
      stripVTControlCharacters(
        renderTerminal([nextCommand(commands, 'then read the numbers')], { width: 200 }),
      ).trimEnd(),
    ).toBe(`next: ${commands[0]}\nnext: ${commands[1]}  # then read the numbers`);
  });

  it("in --help's examples is shown as npx passk, after any environment assignment", () => {
    expect(asRun('passk report trials.jsonl')).toBe('npx passk report trials.jsonl');
    expect(asRun('PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 passk process')).toBe(
      'PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 npx passk process',
    );
    expect(asRun('PASSK_INGEST_TOKEN=$(openssl rand -hex 16) passk ingest --port 0')).toBe(
      'PASSK_INGEST_TOKEN=$(openssl rand -hex 16) npx passk ingest --port 0',
    );
    expect(asRun("printf '%s\\n' r1 > suspects.txt")).toBe("printf '%s\\n' r1 > suspects.txt");
  });
});
