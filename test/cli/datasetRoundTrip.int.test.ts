import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import type { TrialRecorded } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'passk.mjs');
let dir: string;
let data: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-roundtrip-'));
  data = join(dir, 'data');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const passk = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, '--data-dir', data, ...args], { cwd: dir, encoding: 'utf8', timeout: 170_000 });

const trials = async (): Promise<TrialRecorded[]> => {
  const log = createEmbeddedEventLog({ dataDir: data });
  try {
    const out: TrialRecorded[] = [];
    await readLog(log, { topics: [TOPICS.trials] }, ({ event }) => {
      if (event.type === 'TrialRecorded') out.push(event);
    });
    return out;
  } finally {
    await log.close();
  }
};

// An agent that says what type of input it got: an object input read back as a string would answer "string-…".
const AGENT =
  "cmd:node -e \"let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const i=JSON.parse(s).input;" +
  "console.log(JSON.stringify({output: typeof i + '-' + (typeof i === 'object' ? i.amount : i)}))})\"";

describe('a dataset round trip: publish, run, process, export, run the export', () => {
  it('exports rows exactly as published (objects stay objects), and a run of the export is the same trials', async () => {
    const rows = [
      { id: 'a', input: { q: 'refund', amount: 3 }, expected: 'object-3', tags: ['must_not_break'] },
      { id: 'b', input: '42', expected: 'string-42' },
      { id: 'c', input: { q: 'refund', amount: 7, items: [1, 2] }, expected: { not: 'text' } },
    ];
    writeFileSync(join(dir, 'refunds.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const published = passk('dataset', 'publish', 'refunds.jsonl', '--json');
    expect(published.status, published.stderr).toBe(0);
    const first = passk('run', '--dataset', 'refunds.jsonl', '--agent', AGENT, '--k', '2', '--json');
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ done: 6, passed: 4, failed: 2, ungraded: 0 });
    const before = await trials();
    expect(before).toHaveLength(6);

    const processed = passk('process', '--until-caught-up', '--json');
    expect(processed.status, processed.stderr).toBe(0);
    const exported = passk('dataset', 'export', '--dataset', 'refunds', '--version', 'latest', '--out', 'out.jsonl');
    expect(exported.status, exported.stderr).toBe(0);
    const lines = readFileSync(join(dir, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.id, l.input, l.expected, l.dataset_id])).toEqual(
      rows.map((r) => [r.id, r.input, r.expected, 'refunds']),
    );

    // the export is run under the published dataset's id and version: the same run, the same trial identities
    const again = passk('run', '--dataset', 'out.jsonl', '--agent', AGENT, '--k', '2', '--json');
    expect(again.status, again.stderr).toBe(0);
    const firstRun = (JSON.parse(first.stdout) as { runId: string }).runId;
    expect(JSON.parse(again.stdout)).toMatchObject({ runId: firstRun, total: 6, skipped: 6, done: 0 });
    // and with a fresh run id, every trial passes or fails as before: the agent got objects, not their text
    const fresh = passk('run', '--dataset', 'out.jsonl', '--agent', AGENT, '--k', '2', '--run-id', 'again', '--json');
    expect(fresh.status, fresh.stderr).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ done: 6, passed: 4, failed: 2 });
    const after = await trials();
    const identity = (t: TrialRecorded) => [t.suite, t.dataset_id, t.dataset_version, t.agent.version, t.row_id];
    expect(new Set(after.filter((t) => t.run_id === 'again').map((t) => JSON.stringify(identity(t))))).toEqual(
      new Set(before.map((t) => JSON.stringify(identity(t)))),
    );
  });

  it('refuses to export a version the log holds and the store does not yet, naming it, and exports it once folded', () => {
    // a second version (row d added), published after the last fold: `dataset versions` (the log) lists it
    const grown = [...readFileSync(join(dir, 'refunds.jsonl'), 'utf8').trim().split('\n'), '{"id":"d","input":"9"}'];
    writeFileSync(join(dir, 'refunds.jsonl'), grown.join('\n') + '\n');
    expect(passk('dataset', 'publish', 'refunds.jsonl').status).toBe(0);
    const listed = passk('dataset', 'versions', '--dataset', 'refunds', '--json');
    const versions = (JSON.parse(listed.stdout) as { versions: { dataset_version: string }[] }).versions;
    expect(versions).toHaveLength(2);
    const v2 = versions[1]!.dataset_version;
    for (const asked of ['latest', '2', v2]) {
      const r = passk('dataset', 'export', '--dataset', 'refunds', '--version', asked, '--out', 'v2.jsonl');
      expect(r.status, `--version ${asked}: ${r.stderr}`).toBe(2);
      expect(r.stderr.replace(/\s+/g, ' ')).toContain(
        `dataset refunds version ${v2} is on the event log but not in the store yet`,
      );
    }
    // the version the store holds still exports
    expect(passk('dataset', 'export', '--dataset', 'refunds', '--version', '1', '--out', 'v1.jsonl').status).toBe(0);
    expect(readFileSync(join(dir, 'v1.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    expect(passk('process', '--until-caught-up').status).toBe(0);
    const r = passk('dataset', 'export', '--dataset', 'refunds', '--version', 'latest', '--out', 'v2.jsonl');
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(dir, 'v2.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);
  });
});
