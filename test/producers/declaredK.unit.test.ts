import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildReport, DEFAULT_REPORT_OPTIONS, groupTrials, type DeclaredRun } from '../../processors/core/index.ts';
import { importFiles } from '../../producers/importers/importFiles.ts';
import { readToolResults } from '../../producers/importers/readResultTrials.ts';
import { createMemoryPublisher } from '../../producers/sdk/memoryPublisher.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';

// What other tools' files declare about the attempts per row (issue 27): Inspect's epochs, τ²-bench's num_trials,
// τ-bench's trials (its display_metrics' num_trials), promptfoo's evaluateOptions.repeat. An attempt missing from
// the file must not lower the report's K; on the complete real files the numbers stay the tools' own.
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const TOOL = join(FIXTURES, 'tool-outputs');
const dir = mkdtempSync(join(tmpdir(), 'passk-declared-k-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The report of a tool file as `passk report` makes it: its trials, and its declaration for each of its runs. */
const reportOf = async (file: string) => {
  const read = (await readToolResults(file))!;
  const declared: DeclaredRun[] =
    read.declaredK === undefined
      ? []
      : read.trials.map((t) => ({
          suite: t.suite,
          dataset_version: t.dataset_version,
          agent_version: t.agent.version,
          run_id: t.run_id,
          k: read.declaredK!,
        }));
  const opts = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { reps: 20, seed: 1, confidence: 0.95 }, declared };
  return { declaredK: read.declaredK, groups: buildReport(groupTrials(read.trials), opts).groups };
};
const curve = (g: { pass_hat_k: Record<string, number | null> }) =>
  Object.values(g.pass_hat_k).map((x) => Math.round(x! * 10_000) / 10_000);
/** A copy of a fixture, changed by `edit`. */
const copyOf = <T>(name: string, edit: (doc: T) => void): string => {
  const doc = JSON.parse(readFileSync(join(TOOL, name), 'utf8')) as T;
  edit(doc);
  const file = join(dir, `edited-${name}`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
};

describe('τ-bench (num_trials: the distinct trial values, as its display_metrics counts them)', () => {
  const name = 'tau-bench-gpt-4o-airline-historical.json';
  it("declares 4 and gives τ-bench's own pass^1..4 on the published file", async () => {
    const { declaredK, groups } = await reportOf(join(TOOL, name));
    expect(declaredK).toBe(4);
    expect(groups[0]).toMatchObject({ k_max: 4, declared_k: 4, rows_short: 0 });
    expect(curve(groups[0]!)).toEqual([0.42, 0.2733, 0.22, 0.2]);
  });

  it('an entry missing from the file does not lower K to 3; the short task is counted', async () => {
    const file = copyOf<{ task_id: number; trial: number }[]>(name, (doc) => {
      doc.splice(
        doc.findIndex((e) => e.task_id === 0 && e.trial === 2),
        1,
      );
    });
    const { groups } = await reportOf(file);
    expect(groups[0]).toMatchObject({ k_max: 4, rows_short: 1, rows_at_k: { '3': 50, '4': 49 } });
  });
});

describe('τ²-bench (info.num_trials)', () => {
  const name = 'tau2-grok-4-airline-4trials.json';
  it('declares 4: pass^1..4 = 0.4375 / 0.2083 / 0.0625 / 0 on the file', async () => {
    const { declaredK, groups } = await reportOf(join(TOOL, name));
    expect(declaredK).toBe(4);
    expect(curve(groups[0]!)).toEqual([0.4375, 0.2083, 0.0625, 0]);
  });

  it('a simulation cut out of the file: K stays 4 (it was 3), pass^4 over the 3 tasks with 4', async () => {
    const file = copyOf<{ simulations: { task_id: string; trial: number }[] }>(name, (doc) => {
      doc.simulations = doc.simulations.filter((s) => !(s.task_id === '8' && s.trial === 0));
    });
    const { groups } = await reportOf(file);
    expect(groups[0]).toMatchObject({ k_max: 4, declared_k: 4, rows_short: 1, rows_at_k: { '4': 3 } });
  });
});

describe('Inspect (eval.config.epochs of a finished eval)', () => {
  it('declares its epochs, from a .json log and from an .eval zip; the R writer vitals declares none', async () => {
    expect((await reportOf(join(TOOL, 'inspect-epochs2-intercode-ctf.json'))).declaredK).toBe(2);
    expect((await reportOf(join(FIXTURES, 'inspect-epochs2-intercode-ctf.eval'))).declaredK).toBe(2);
    // vitals writes `config: []`: nothing declared, K counted (3 epochs each)
    const vitals = await reportOf(join(TOOL, 'vitals-inspect-format-epochs3-are-gpt-4o.json'));
    expect(vitals.declaredK).toBeUndefined();
    expect(vitals.groups[0]).toMatchObject({ k_max: 3, declared_k: null });
    // an eval that did not finish (status error) declares nothing
    const file = copyOf<{ status: string }>('inspect-epochs2-intercode-ctf.json', (doc) => {
      doc.status = 'error';
    });
    expect((await reportOf(file)).declaredK).toBeUndefined();
  });
});

describe('promptfoo (config.evaluateOptions.repeat)', () => {
  const name = 'promptfoo-repeat3-results.json';
  it('a config that sets evaluateOptions.repeat declares it; a repeat missing from the file keeps K at 3', async () => {
    // --repeat on the command line is not in the file: nothing declared
    expect((await reportOf(join(TOOL, name))).declaredK).toBeUndefined();
    type Doc = { config: { evaluateOptions: { repeat?: number } }; results: { results: { testIdx: number }[] } };
    const file = copyOf<Doc>(name, (doc) => {
      doc.config.evaluateOptions.repeat = 3;
      doc.results.results = doc.results.results.filter((r) => r.testIdx !== 0);
    });
    const { declaredK, groups } = await reportOf(file);
    expect(declaredK).toBe(3);
    expect(groups.map((g) => g.k_max)).toEqual([3, 3]);
    // testIdx 0 is one result of each provider: one short row in each version
    expect(groups.map((g) => g.rows_short)).toEqual([1, 1]);
  });
});

describe('passk import writes the declaration as its RunFinished k, and only a declaration', () => {
  it('τ²-bench with a simulation cut out: k 4 (no k before: the rows had different counts)', async () => {
    const file = copyOf<{ simulations: { task_id: string; trial: number }[] }>(
      'tau2-grok-4-airline-4trials.json',
      (doc) => {
        doc.simulations = doc.simulations.filter((s) => !(s.task_id === '8' && s.trial === 0));
      },
    );
    const publisher = createMemoryPublisher();
    const [report] = await importFiles([file], {}, { publisher });
    const finished = publisher.events.filter((e): e is RunFinished => e.type === 'RunFinished');
    expect(finished.map((f) => f.k)).toEqual([4]);
    expect(report!.summary[0]).toMatchObject({ attempts: 4, declared: 4, short: 1 });
  });

  it('vitals (nothing declared, every sample 3 epochs): no k', async () => {
    const publisher = createMemoryPublisher();
    await importFiles([join(TOOL, 'vitals-inspect-format-epochs3-are-gpt-4o.json')], {}, { publisher });
    const finished = publisher.events.filter((e): e is RunFinished => e.type === 'RunFinished');
    expect(finished.map((f) => f.k)).toEqual([undefined]);
  });
});
