import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../importers/common.ts';
import { withPreparedRun } from '../runDataset.ts';
import { createCommandAgent } from './commandAgent.ts';
import { commandFiles, commandWords } from './commandFiles.ts';

/**
 * A command agent's default version hashes the files its command names (a new user's trial: editing
 * `evals/agent.py` under the same `--agent 'cmd:python3 evals/agent.py'` ran 0 attempts, "40 already recorded",
 * because the version hashed the command's text only).
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-cmd-agent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'evals'));
writeFileSync(join(dir, 'rows.jsonl'), '{"id":"r1","input":"a","expected":"a"}\n');
const COMMAND = 'python3 evals/agent.py';
const fingerprint = (command = COMMAND) => createCommandAgent({ command, cwd: dir }).fingerprint;
/** The default agent version `passk run` records for the agent (and what it says of it), from this directory. */
const versionOf = (agent: string, agentVersion?: string) =>
  withPreparedRun(
    { dataset: join(dir, 'rows.jsonl'), agent, ...(agentVersion ? { agentVersion } : {}) },
    async (p) => ({ version: p.agentVersion, note: p.agentVersionNote }),
  );

describe("a command agent's version", () => {
  it('changes when the script the command names is edited, and not otherwise', async () => {
    writeFileSync(join(dir, 'evals', 'agent.py'), 'print("v1")\n');
    const before = fingerprint();
    expect(fingerprint()).toBe(before);
    writeFileSync(join(dir, 'evals', 'agent.py'), 'print("v2")\n');
    expect(fingerprint()).not.toBe(before);
    // through `passk run`'s default version: an absolute path, found whatever the working directory
    const agent = `cmd:python3 ${join(dir, 'evals', 'agent.py')}`;
    const v2 = await versionOf(agent);
    writeFileSync(join(dir, 'evals', 'agent.py'), 'print("v3")\n');
    const v3 = await versionOf(agent);
    expect(v2.version).toMatch(/^sha-[0-9a-f]{12}$/);
    expect(v3.version).not.toBe(v2.version);
    expect(v3.note).toBeUndefined();
  });

  it('is the hash of the text alone when the command names no file (the versions recorded before)', () => {
    const command = `node -e "console.log(1)" missing.py evals`;
    expect(fingerprint(command)).toBe(`command:${sha256(command)}`);
  });

  it('an explicit --agent-version wins over the hash', async () => {
    const agent = `cmd:python3 ${join(dir, 'evals', 'agent.py')}`;
    writeFileSync(join(dir, 'evals', 'agent.py'), 'print("v4")\n');
    expect((await versionOf(agent, 'mine-1')).version).toBe('mine-1');
    writeFileSync(join(dir, 'evals', 'agent.py'), 'print("v5")\n');
    expect(await versionOf(agent, 'mine-1')).toEqual({ version: 'mine-1', note: undefined });
  });

  it('leaves a file over the size bound out, and says so', async () => {
    writeFileSync(join(dir, 'weights.bin'), Buffer.alloc(4 * 1024 * 1024 + 1));
    const files = commandFiles(`python3 evals/agent.py --weights weights.bin`, dir);
    expect(files.hashed.map((f) => f.word)).toEqual(['evals/agent.py']);
    expect(files.skipped).toEqual([{ word: 'weights.bin', bytes: 4 * 1024 * 1024 + 1 }]);
    const agent = createCommandAgent({ command: 'python3 evals/agent.py weights.bin', cwd: dir });
    expect(agent.fingerprintNote).toBe(
      'weights.bin (4.0 MiB) not hashed into the agent version (files over 4 MiB are not): editing it makes no new version',
    );
    const run = await versionOf(`cmd:python3 ${join(dir, 'weights.bin')}`);
    expect(run.note).toContain('weights.bin (4.0 MiB) not hashed');
  });

  it('reads the words as the shell does: quotes and escapes off, operators split, nothing expanded', () => {
    expect(commandWords(`python3 'my agent.py' "a \\"b\\"" c\\ d <in.json|jq .x;echo $HOME ~/x`)).toEqual([
      'python3',
      'my agent.py',
      'a "b"',
      'c d',
      'in.json',
      'jq',
      '.x',
      'echo',
      '$HOME',
      '~/x',
    ]);
    writeFileSync(join(dir, 'my agent.py'), 'x\n');
    expect(commandFiles(`python3 'my agent.py' 'my agent.py'`, dir).hashed.map((f) => f.word)).toEqual(['my agent.py']);
  });
});
