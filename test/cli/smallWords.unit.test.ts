import { describe, expect, it } from 'vitest';
import { pairVersions, type CompareFlags } from '../../cli/commands/compare.ts';
import { summaryBlocks } from '../../cli/commands/run.ts';
import { buildProgram } from '../../cli/program.ts';
import { renderTerminal } from '../../cli/format/render.ts';
import type { Group } from '../../processors/core/groups.ts';

/** Small words a new user's trial found wrong: each says what is true, in the form the user types. */

const helpOf = async (name: string): Promise<string> => {
  const cmd = (await buildProgram([], { outline: false })).commands.find((c) => c.name() === name)!;
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80 });
  cmd.outputHelp();
  return out.replace(/\s+/g, ' ');
};

describe('what passk says', () => {
  it("compare --help names the gate as it is run (npx passk gate), run --help the timeout's default as 60s", async () => {
    expect(await helpOf('compare')).toContain('use npx passk gate to fail on one');
    const run = await helpOf('run');
    expect(run).toContain('(default: 60s)');
    expect(run).not.toContain('60000');
  });

  it('compare --from-store names the store, not files, when a version has no trials', () => {
    const groups = [{ key: { suite: 's', dataset_version: 'd', agent_version: 'v1' }, rows: new Map() }];
    const flags = { baseline: 'v1', candidate: 'v9' } as CompareFlags;
    expect(() => pairVersions(groups as unknown as Group[], { ...flags, fromStore: true })).toThrow(
      'versions in the store: v1',
    );
    expect(() => pairVersions(groups as unknown as Group[], flags)).toThrow('versions in the files: v1');
  });

  it("a run's summary shows — for tokens when the agent reported none, as for cost", () => {
    const summary = {
      runId: 'run-1',
      status: 'completed' as const,
      total: 3,
      skipped: 0,
      done: 3,
      passed: 3,
      failed: 0,
      ungraded: 0,
      retries: 0,
      wallMs: 1_000,
      costUsd: 0,
      tokens: { input: 0, output: 0 },
      errors: {},
      messages: {},
    };
    const none = renderTerminal(summaryBlocks(summary), { width: 160 });
    expect(none).not.toContain('0/0');
    expect(renderTerminal(summaryBlocks({ ...summary, tokens: { input: 120, output: 45 } }), { width: 160 })).toContain(
      '120/45',
    );
  });
});
