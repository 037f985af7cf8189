import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import type { EventLog } from '../../processors/ports.ts';
import { passCurves } from '../../processors/core/estimators.ts';
import { importFiles } from '../../producers/importers/importFiles.ts';
import { readLog } from '../../producers/logReader.ts';
import type { PasskEvent, TrialRecorded } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { PUBLIC_TRIALS, TOOL_OUTPUTS } from '../helpers/fixtures.ts';

const TOOLS = TOOL_OUTPUTS;
const PUBLIC = PUBLIC_TRIALS;
const noWait = { retries: 2, initialMs: 0, factor: 2, maxMs: 0 };

let dir: string;
let log: EventLog;

const all = async (): Promise<PasskEvent[]> => {
  const events: PasskEvent[] = [];
  await readLog(log, { topics: [TOPICS.trials] }, (e) => events.push(e.event));
  return events;
};

/** pass^k for k = 1..maxK, per row from the log's trials, averaged over rows: the τ-bench table. */
const passHat = (trials: readonly TrialRecorded[], maxK: number): number[] => {
  const rows = new Map<string, { n: number; c: number }>();
  for (const t of trials) {
    const r = rows.get(t.row_id) ?? { n: 0, c: 0 };
    rows.set(t.row_id, r);
    if (t.passed === null) continue;
    r.n++;
    if (t.passed) r.c++;
  }
  const curves = [...rows.values()].map((r) => passCurves(r.n, r.c, maxK).passHat);
  return Array.from(
    { length: maxK },
    (_, i) => Math.round((curves.reduce((s, c) => s + c[i]!, 0) / curves.length) * 1000) / 1000,
  );
};

/** A CSV copy of a public-trials file, in the flat format, so the CSV importer reads real data. */
const toCsv = (jsonl: string): string => {
  const lines = readFileSync(jsonl, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const head = 'suite,dataset_version,row_id,agent_version,run_id,attempt,passed,score';
  const body = lines.map((p) =>
    [
      p.domain,
      p.source,
      p.task_id,
      `${String(p.model)}-csv`,
      'csv-run',
      p.trial,
      p.reward === null ? '' : p.passed,
      p.reward ?? '',
    ].join(','),
  );
  return [head, ...body].join('\n') + '\n';
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-import-'));
  log = createEmbeddedEventLog({ dataDir: dir });
});
afterAll(async () => {
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('passk import into the embedded log', () => {
  const files = [
    join(TOOLS, 'tau-bench-claude-3.7-sonnet-airline-revised-test.json'),
    join(TOOLS, 'tau2-gpt-4.1-telecom-no-user-4trials.json'),
    join(TOOLS, 'tau2-grok-4-airline-4trials.json'),
    join(TOOLS, 'promptfoo-repeat3-results.json'),
    join(TOOLS, 'inspect-epochs2-intercode-ctf.json'),
    join(TOOLS, 'vitals-inspect-format-epochs3-are-gpt-4o.json'),
    join(PUBLIC, 'tau_bench.jsonl'),
  ];
  const expectedTrials = 108 + 20 + 16 + 120 + 2 + 84 + 660;

  it('publishes every trial once, and the counts match each tool', async () => {
    const csv = join(dir, 'neo.csv');
    writeFileSync(csv, toCsv(join(PUBLIC, 'neo_tau_bench.jsonl')));
    const reports = await importFiles([...files, csv], {}, { publisher: log.publisher, source: log, retry: noWait });
    expect(reports.map((r) => r.format)).toEqual([
      'tau-bench',
      'tau2-bench',
      'tau2-bench',
      'promptfoo',
      'inspect',
      'inspect',
      'jsonl',
      'csv',
    ]);
    expect(reports.map((r) => r.trials)).toEqual([108, 20, 16, 120, 2, 84, 660, 216]);
    expect(reports.every((r) => r.skipped === 0)).toBe(true);
    const events = await all();
    const trials = events.filter((e): e is TrialRecorded => e.type === 'TrialRecorded');
    expect(trials).toHaveLength(expectedTrials + 216);
    expect(new Set(trials.map((t) => t.event_id)).size).toBe(trials.length);
    const promptfoo = trials.filter((t) => t.grader?.id === 'promptfoo');
    expect([
      promptfoo.filter((t) => t.passed === true).length,
      promptfoo.filter((t) => t.passed === false).length,
    ]).toEqual([50, 70]);
    const grok = trials.filter((t) => t.agent.version === 'xai/grok-4');
    expect(passHat(grok, 4)).toEqual([0.438, 0.208, 0.063, 0]);
    // one end-of-run marker per run and agent
    expect(events.filter((e) => e.type === 'RunFinished').length).toBe(
      reports.reduce((s, r) => s + r.published, 0) - trials.length,
    );
  });

  it("reproduces τ-bench's README table from its public trials, read back from the log", async () => {
    const trials = (await all()).filter(
      (e): e is TrialRecorded => e.type === 'TrialRecorded' && e.run_id === 'tau-bench',
    );
    expect(
      passHat(
        trials.filter((t) => t.suite === 'airline'),
        4,
      ),
    ).toEqual([0.42, 0.273, 0.22, 0.2]);
    expect(
      passHat(
        trials.filter((t) => t.suite === 'retail'),
        4,
      ),
    ).toEqual([0.604, 0.491, 0.43, 0.383]);
  });

  it('reads the CSV copy of neo-τ-bench to the same pass^k as the τ-bench JSON of the same run', async () => {
    const trials = (await all()).filter((e): e is TrialRecorded => e.type === 'TrialRecorded');
    const csv = trials.filter((t) => t.run_id === 'csv-run' && t.suite === 'airline:revised_test');
    const json = trials.filter((t) => t.grader?.id === 'tau-bench');
    expect(csv).toHaveLength(108);
    expect(passHat(csv, 4)).toEqual(passHat(json, 4));
    expect(passHat(json, 4)).toEqual([0.519, 0.358, 0.269, 0.222]);
  });

  it('importing the same files again records nothing new', async () => {
    const before = (await all()).length;
    const csv = join(dir, 'neo.csv');
    const reports = await importFiles([...files, csv], {}, { publisher: log.publisher, source: log, retry: noWait });
    expect(reports.map((r) => r.published)).toEqual(reports.map(() => 0));
    expect(reports.reduce((s, r) => s + r.skipped, 0)).toBe(expectedTrials + 216);
    expect((await all()).length).toBe(before);
  });

  it('without the log check, a re-import republishes the same event ids, which count once', async () => {
    const file = join(TOOLS, 'inspect-epochs2-intercode-ctf.json');
    await importFiles([file], {}, { publisher: log.publisher, retry: noWait });
    const ids = (await all())
      .filter((e) => e.type === 'TrialRecorded' && e.suite === 'inspect_evals/luce_intercode_ctf')
      .map((e) => e.event_id);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(2);
  });
});
