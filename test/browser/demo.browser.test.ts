import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { simulateTrial } from '../../demo/agents.ts';
import { loadDemoDataset } from '../../demo/dataset/demoRow.ts';
import { parseRequest } from '../../demo/refundPolicy.ts';
import type { DemoResult } from '../../demo/story.ts';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { judgeCalibration } from '../../sinks/clickhouse/queries/calibration.ts';
import { datasetRows, datasetVersions } from '../../sinks/clickhouse/queries/datasets.ts';
import { gateHistory } from '../../sinks/clickhouse/queries/decisions.ts';
import { alerts, productionWindows } from '../../sinks/clickhouse/queries/production.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import { repeatedInputFlips, traceById, traceGraders } from '../../web/queries.ts';
import { launchChromium } from './chromium.ts';
import { passk, passkServer, ROOT, SCREENSHOTS } from './processes.ts';
import { sharedDemo } from './sharedDemo.ts';

/**
 * The main job end to end: `passk demo --no-serve --json` from a clean data directory, then `passk serve` on what it
 * left (a copy: the run is shared with the explorer and review files, test/browser/sharedDemo.ts), driven by
 * Debian's Chromium. Screenshots of every view go to .reports/screenshots/.
 */
const SHOTS = SCREENSHOTS;

// What the page functions below touch in the browser (the project's tsconfig has no DOM lib).
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  getElementById(id: string): { classList: { contains(c: string): boolean } } | null;
};
declare const location: { hash: string };
declare const window: Record<string, unknown>;
const SUITE = 'refund-review';
const dataset = loadDemoDataset();
// The planted must-not-break regression, found from the dataset itself: the high-value screenshot-only refund.
const planted = dataset.find(
  (r) =>
    r.tags.includes('must_not_break') &&
    parseRequest(r.input).order.proof === 'cart_screenshot' &&
    r.expected_checks.return_window === true,
)!;

let dir: string;
let demo: DemoResult;
let demoMs: number;
let report: {
  groups: {
    dataset_version: string;
    agent_version: string;
    mean_accuracy: number;
    pass_at_1: number;
    pass_hat_k: Record<string, number>;
    flip_rate: number;
    rows: number;
    trials: number;
  }[];
};
/** What the typed queries return on the demo's store, read before `passk serve` takes it (one process per store). */
let stored: {
  gates: Awaited<ReturnType<typeof gateHistory>>;
  windows: Awaited<ReturnType<typeof productionWindows>>;
  alerts: Awaited<ReturnType<typeof alerts>>;
  flips: Awaited<ReturnType<typeof repeatedInputFlips>>;
  trace: Awaited<ReturnType<typeof traceById>>;
  judges: Awaited<ReturnType<typeof judgeCalibration>>;
  datasets: { version: string; rows: number; mnb: Awaited<ReturnType<typeof datasetRows>> }[];
};
let server: Awaited<ReturnType<typeof passkServer>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const pageErrors: string[] = [];

const show = async (hash: string, view: string): Promise<void> => {
  const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
  await page.evaluate((h) => (location.hash = h), hash);
  await page.waitForFunction(
    ([v, b, h]) =>
      document.body.dataset.view === v &&
      document.body.dataset.route === h &&
      Number(document.body.dataset.renders ?? 0) > Number(b),
    [view, before, hash],
  );
};
const shoot = async (name: string): Promise<string> => {
  const file = join(SHOTS, `${name}.png`);
  await page.waitForTimeout(200); // let uPlot finish its first paint
  await page.screenshot({ path: file, fullPage: true });
  return file;
};
/** A data-value attribute as the number it holds ('' = null). */
const valueOf = (v: string | null): number | null => (v === null || v === '' ? null : Number(v));
const metric = (version: string, name: string) =>
  page.getAttribute(`[data-testid="version-card"][data-version="${version}"] [data-metric="${name}"]`, 'data-value');

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'passk-demo-'));
  const run = await sharedDemo(dir);
  if (run.code !== 0) throw new Error(`passk demo exited ${run.code}\n${run.stderr}`);
  demo = JSON.parse(run.stdout) as DemoResult;
  demoMs = run.ms;
  writeFileSync(
    join(ROOT, '.reports', 'demo-wall-time.txt'),
    `passk demo --no-serve --json: ${demoMs} ms wall (demo's own clock: ${demo.wall_ms} ms)\n`,
  );

  // The same trials the dashboard will read, as a flat trial file for `passk report --json`.
  const demoDir = join(dir, 'demo');
  const store = await openStore(loadConfig({ dataDir: demoDir }, {}, ROOT));
  const trials = await loadTrialsForReport(store.client, { suites: [SUITE] });
  const ALL = { from: 0, to: 8_640_000_000_000 };
  const [grader] = await traceGraders(store.client);
  stored = {
    gates: await gateHistory(store.client, { suite: SUITE }),
    windows: await productionWindows(store.client, ALL),
    alerts: await alerts(store.client, ALL),
    flips: grader ? await repeatedInputFlips(store.client, { grader }) : [],
    trace: await traceById(store.client, demo.production.confirmed_failure.trace_id),
    judges: await judgeCalibration(store.client),
    datasets: await Promise.all(
      (await datasetVersions(store.client, { dataset_id: demo.dataset.id })).map(async (v) => ({
        version: v.dataset_version,
        rows: v.rows,
        mnb: await datasetRows(store.client, {
          dataset_id: demo.dataset.id,
          dataset_version: v.dataset_version,
          mustNotBreakOnly: true,
        }),
      })),
    ),
  };
  await store.close();
  const file = join(dir, 'trials.jsonl');
  writeFileSync(
    file,
    trials
      .map(({ type: _t, schema_version: _s, producer: _p, agent, ...t }) =>
        JSON.stringify({ ...t, agent_version: agent.version }),
      )
      .join('\n') + '\n',
  );
  const rep = await passk(['report', '--json', file]);
  if (rep.code !== 0) throw new Error(`passk report exited ${rep.code}\n${rep.stderr}`);
  report = JSON.parse(rep.stdout) as typeof report;

  server = await passkServer(['--data-dir', demoDir, 'serve', '--port', '0', '--json'], (line) => {
    try {
      return (JSON.parse(line) as { url?: string }).url;
    } catch {
      return undefined;
    }
  });
  browser = await launchChromium();
  page = browser.page;
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 400_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('passk demo --no-serve --json', () => {
  it('holds both versions’ numbers, the regressed rows with the planted must-not-break row, and a failing gate naming it', () => {
    expect(planted).toBeDefined();
    console.log(`passk demo --no-serve --json took ${demoMs} ms`);
    expect(demo.numbers.map((n) => n.agent_version)).toEqual([demo.baseline, demo.candidate]);
    for (const n of demo.numbers) {
      expect(n.rows).toBe(dataset.length);
      for (const h of [n.mean_accuracy, n.pass_hat_k, n.flip_rate]) {
        expect(h.value).toBeTypeOf('number');
        expect(h.interval![0]).toBeLessThanOrEqual(h.value!);
        expect(h.interval![1]).toBeGreaterThanOrEqual(h.value!);
      }
    }
    const [b, c] = demo.numbers;
    expect(c!.mean_accuracy.value!).toBeGreaterThan(b!.mean_accuracy.value!);
    expect(demo.lost_stable_correct).toContain(planted.row_id);
    const row = demo.regressions.find((r) => r.row_id === planted.row_id);
    expect(row).toMatchObject({
      must_not_break: true,
      outcome: 'confirmed_regression',
      first_divergent_check: 'proof_of_purchase',
    });
    expect(demo.gate.verdict).toBe('fail');
    const failed = demo.gate.reasons.filter((r) => !r.passed);
    expect(failed.flatMap((r) => r.rows)).toEqual([planted.row_id]);
  });

  it('gates through the processors: their confirmation request named the suspects, their GateEvaluated is stored', () => {
    // the processors asked to confirm exactly the rows stable-correct on the baseline and not on the candidate
    // (6 more attempts each, 3 more on the must-not-break one: what the demo declared)
    const asked = demo.gate.confirmation!;
    expect(asked).toMatchObject({
      rows: demo.lost_stable_correct,
      attempts: 6,
      must_not_break: { rows: [planted.row_id], attempts: 9 },
      run_id: `confirm-${demo.gate.gate_id}`,
    });
    for (const r of demo.regressions)
      expect([r.row_id, r.baseline.n, r.candidate.n]).toEqual([
        r.row_id,
        3 + (r.must_not_break ? 9 : 6),
        3 + (r.must_not_break ? 9 : 6),
      ]);
    expect(demo.next_gate).not.toBeNull();
    // the JSON's event ids are the processors' verdicts the store holds, and no other gate was published
    expect(stored.gates.map((g) => [g.gate_id, g.event_id]).sort()).toEqual(
      [
        [demo.gate.gate_id, demo.gate.event_id],
        [demo.next_gate!.gate_id, demo.next_gate!.event_id],
      ].sort(),
    );
  });
});

describe('the dashboard, in Chromium', () => {
  it('loads, with every view reachable and no page errors', async () => {
    await page.goto(server.value);
    await page.waitForFunction(() => Number(document.body.dataset.renders ?? 0) > 0);
    expect(await page.title()).toContain('passk');
    expect(await page.locator('#nav a').allTextContents()).toEqual([
      'Overview',
      'Compare',
      'Rows',
      'Gates',
      'Production',
      'Judges',
      'Datasets',
      'Dead letters',
    ]);
    await page.waitForFunction(() => document.getElementById('live')?.classList.contains('on'));
    for (const view of ['gates', 'production', 'judges', 'datasets', 'deadletters']) {
      await show(`#/${view}?suite=${SUITE}&dataset_version=${demo.dataset.version}`, view);
      expect(await page.locator('#view .card').count()).toBeGreaterThan(0);
    }
    expect(pageErrors).toEqual([]);
  });

  it('shows overview numbers equal to `passk report --json` on the same trials', async () => {
    await show(`#/overview?suite=${SUITE}&dataset_version=${demo.dataset.version}`, 'overview');
    const groups = report.groups.filter((g) => g.dataset_version === demo.dataset.version);
    expect(groups.map((g) => g.agent_version).sort()).toEqual([demo.baseline, demo.candidate]);
    for (const g of groups) {
      expect(Number(await metric(g.agent_version, 'mean_accuracy'))).toBe(g.mean_accuracy);
      expect(Number(await metric(g.agent_version, 'pass_at_1'))).toBe(g.pass_at_1);
      expect(Number(await metric(g.agent_version, 'pass_hat_3'))).toBe(g.pass_hat_k['3']);
      expect(Number(await metric(g.agent_version, 'flip_rate'))).toBe(g.flip_rate);
      expect(
        await page.textContent(
          `[data-testid="version-card"][data-version="${g.agent_version}"] [data-testid="evidence"]`,
        ),
      ).toContain(`${g.rows} rows · ${g.trials} graded trials`);
    }
    expect(await page.locator('.chart canvas').count()).toBeGreaterThanOrEqual(3);
    expect(statSync(await shoot('overview')).size).toBeGreaterThan(10_000);
  });

  it('lists the planted regression in the compare view, with its first divergent check and a drill-down', async () => {
    await show(
      `#/compare?suite=${SUITE}&dataset_version=${demo.dataset.version}&baseline=${demo.baseline}&candidate=${demo.candidate}`,
      'compare',
    );
    const item = page.locator(`[data-testid="regressed-list"] li[data-row="${planted.row_id}"]`);
    expect(await item.getAttribute('data-outcome')).toBe('confirmed_regression');
    expect(await item.locator('.chip.mnb').count()).toBe(1);
    expect(await item.locator('[data-testid="first-divergence"]').getAttribute('data-check')).toBe('proof_of_purchase');
    await show(
      `#/compare?suite=${SUITE}&dataset_version=${demo.dataset.version}&baseline=${demo.baseline}&candidate=${demo.candidate}&row=${planted.row_id}`,
      'compare',
    );
    expect(await page.getAttribute('[data-testid="drill-divergence"]', 'data-check')).toBe('proof_of_purchase');
    expect(await page.locator('[data-testid="drill-down"] table.attempts tbody tr').count()).toBeGreaterThanOrEqual(
      2 * 3,
    );
    expect(statSync(await shoot('compare')).size).toBeGreaterThan(10_000);
  });

  it('shows the gate history and the current verdict with its reasons, as the store holds them', async () => {
    await show(`#/gates?suite=${SUITE}`, 'gates');
    expect(stored.gates.map((g) => g.gate_id)).toEqual(
      expect.arrayContaining([demo.gate.gate_id, demo.next_gate!.gate_id]),
    );
    const history = page.locator('[data-testid="gate-history"] tbody tr');
    expect(
      await history.evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute('data-gate'), tr.getAttribute('data-verdict')]),
      ),
    ).toEqual(stored.gates.map((g) => [g.gate_id, g.verdict]));
    const newest = stored.gates[0]!;
    expect(await page.getAttribute('[data-testid="current-gate"]', 'data-gate')).toBe(newest.gate_id);
    expect(await page.getAttribute('[data-testid="current-gate"] [data-testid="verdict"]', 'data-verdict')).toBe(
      newest.verdict,
    );
    const reasons = async () =>
      page
        .locator('[data-testid="reasons"] li')
        .evaluateAll((lis) =>
          lis.map((li) => [
            li.getAttribute('data-rule'),
            li.classList.contains('ok'),
            li.querySelector('.detail')?.textContent,
          ]),
        );
    expect(await reasons()).toEqual(newest.reasons.map((r) => [r.rule, r.passed, r.detail]));

    // The demo's first gate, from the history: FAIL, naming the planted must-not-break row (as `passk demo --json` says).
    await show(`#/gates?suite=${SUITE}&gate=${demo.gate.gate_id}`, 'gates');
    expect(await page.getAttribute('[data-testid="current-gate"] [data-testid="verdict"]', 'data-verdict')).toBe(
      'fail',
    );
    expect(await reasons()).toEqual(demo.gate.reasons.map((r) => [r.rule, r.passed, r.detail]));
    expect(
      await page
        .locator('[data-testid="reasons"] li.bad .chip')
        .evaluateAll((cs) => cs.map((c) => c.getAttribute('data-row'))),
    ).toEqual([planted.row_id]);
    expect(statSync(await shoot('gates')).size).toBeGreaterThan(10_000);
  });

  it('shows production windows, alerts and flips on repeated inputs, as the store holds them', async () => {
    await show(`#/production?suite=${SUITE}`, 'production');
    const rows = await page
      .locator('[data-testid="windows"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          ['data-version', 'data-segment', 'data-grader', 'data-start', 'data-end', 'data-pass-rate'].map((a) =>
            tr.getAttribute(a),
          ),
        ),
      );
    expect(rows.length).toBeGreaterThan(0);
    // one grader's windows (the picker's first graded one), never another's beside them
    const grader = await page.getAttribute('[data-testid="graders"]', 'data-grader');
    expect(new Set(rows.map((r) => r[2]))).toEqual(new Set([grader]));
    for (const [version, segment, ofGrader, start, end, rate] of rows) {
      const w = stored.windows.find(
        (x) =>
          x.agent_version === version &&
          x.segment === segment &&
          x.grader === ofGrader &&
          x.window_start === Number(start) &&
          x.window_end === Number(end),
      );
      expect(w, `window ${version} ${segment} ${start}`).toBeDefined();
      expect(rate === '' ? null : Number(rate)).toBe(w!.pass_rate); // '' = not graded (null, never 0)
    }
    expect(new Set(rows.map((r) => r[0]))).toEqual(new Set([demo.production.agent_version]));
    const shownAlerts = await page
      .locator('[data-testid="alerts"] li')
      .evaluateAll((lis) => lis.map((li) => li.getAttribute('data-alert')));
    expect(shownAlerts.sort()).toEqual(stored.alerts.map((a) => a.alert_id).sort());
    const flips = await page
      .locator('[data-testid="repeated-flips"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-fingerprint')));
    expect(flips).toEqual(stored.flips.map((f) => f.input_fingerprint));
    expect(flips).toHaveLength(demo.production.repeated_inputs_that_flipped);
    expect(flips.length).toBeGreaterThan(0);
    expect(statSync(await shoot('production')).size).toBeGreaterThan(10_000);
  });

  it('shows each judge’s κ and confusion matrix, as the store holds them', async () => {
    await show(`#/judges?suite=${SUITE}`, 'judges');
    expect(stored.judges.length).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="judge"]').count()).toBe(stored.judges.length);
    for (const j of stored.judges) {
      const card = page.locator(`[data-testid="judge"][data-judge="${j.judge.id}"]`);
      expect(valueOf(await card.locator('[data-metric="kappa"]').getAttribute('data-value'))).toBe(j.agreement.kappa);
      expect(valueOf(await card.locator('[data-metric="position_swap"]').getAttribute('data-value'))).toBe(
        j.position_swap.rate,
      );
      if (!j.agreement.items) continue;
      const cells = await card
        .locator('[data-testid="confusion"] td')
        .evaluateAll((tds) =>
          tds.map((td) => [td.getAttribute('data-human'), td.getAttribute('data-judge'), Number(td.textContent)]),
        );
      expect(cells).toEqual(
        j.agreement.confusion.labels.flatMap((hl) =>
          j.agreement.confusion.labels.map((jl) => [hl, jl, j.agreement.confusion.matrix[hl]?.[jl] ?? 0]),
        ),
      );
    }
    expect(stored.judges.some((j) => j.agreement.items > 0 && j.agreement.kappa !== null)).toBe(true);
    expect(statSync(await shoot('judges')).size).toBeGreaterThan(10_000);

    // A disagreement cell opens the items in it: the ones to read first.
    const j = stored.judges.find((x) =>
      x.agreement.confusion.labels.some((hl) =>
        x.agreement.confusion.labels.some((jl) => hl !== jl && (x.agreement.confusion.matrix[hl]?.[jl] ?? 0) > 0),
      ),
    )!;
    const c = j.agreement.confusion;
    const [hl, jl] = c.labels
      .flatMap((a) => c.labels.map((b) => [a, b] as const))
      .find(([a, b]) => a !== b && (c.matrix[a]?.[b] ?? 0) > 0)!;
    await page.click(
      `[data-testid="judge"][data-judge="${j.judge.id}"] [data-testid="confusion"] td[data-human="${hl}"][data-judge="${jl}"] a`,
    );
    const items = page.locator(`[data-testid="judge"][data-judge="${j.judge.id}"] [data-testid="cell-items"]`);
    await items.waitFor();
    expect(Number(await items.getAttribute('data-count'))).toBe(c.matrix[hl]![jl]);
    expect((await items.locator('.ids').textContent())!.split(', ')).toEqual(c.items![hl]![jl]);
  });

  it('shows dataset versions and must-not-break rows, with the production row linked to its trace', async () => {
    await show(`#/datasets?suite=${SUITE}`, 'datasets');
    const versions = await page
      .locator('[data-testid="dataset-versions"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-version'),
          Number(tr.getAttribute('data-rows')),
          Number(tr.getAttribute('data-mnb')),
        ]),
      );
    expect(versions.sort()).toEqual(stored.datasets.map((d) => [d.version, d.rows, d.mnb.length]).sort());
    const pf = demo.production.confirmed_failure;
    expect(versions.map((v) => v[0])).toEqual(expect.arrayContaining([demo.dataset.version, pf.dataset_version]));
    for (const d of stored.datasets) {
      const ids = await page
        .locator(`[data-testid="mnb-rows"][data-version="${d.version}"] tbody tr`)
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-row')));
      expect(ids.sort()).toEqual(d.mnb.map((r) => r.row_id).sort());
    }
    expect(stored.datasets.find((d) => d.version === demo.dataset.version)!.mnb).toHaveLength(
      demo.dataset.must_not_break,
    );
    const link = page.locator(
      `[data-testid="mnb-rows"][data-version="${pf.dataset_version}"] tr[data-row="${pf.row_id}"] a[data-trace]`,
    );
    expect(await link.getAttribute('data-trace')).toBe(pf.trace_id);
    expect(statSync(await shoot('datasets')).size).toBeGreaterThan(10_000);

    // The provenance link leads to the trace the row came from: what the live version answered, and its audit.
    const before = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
    await link.click();
    await page.waitForFunction(
      (b) => document.body.dataset.view === 'production' && Number(document.body.dataset.renders ?? 0) > b,
      before,
    );
    expect(stored.trace).toMatchObject({ trace_id: pf.trace_id, output: pf.output });
    expect(await page.getAttribute('[data-testid="trace"]', 'data-trace')).toBe(pf.trace_id);
    expect(await page.textContent('[data-testid="trace"] [data-field="output"]')).toBe(pf.output);
    expect(await page.textContent('[data-testid="trace"] [data-field="verdicts"]')).toBe(
      stored.trace!.verdicts.map((v) => `${v.grader}: ${v.passed ? 'pass' : 'fail'}`).join(', '),
    );
    // the card pretty-prints a JSON input: the same value, laid out to read
    const shownInput = (await page.textContent('[data-testid="trace"] [data-field="input"]'))!;
    expect(JSON.parse(shownInput)).toEqual(JSON.parse(stored.trace!.input!));
    expect(shownInput).toContain('\n  "message": ');
    expect(pageErrors).toEqual([]);
  });

  it('updates without a reload when new trials are published', async () => {
    await show(`#/overview?suite=${SUITE}&dataset_version=${demo.dataset.version}`, 'overview');
    await page.evaluate(() => (window.notReloaded = true));
    const updates = await page.evaluate(() => Number(document.body.dataset.updates ?? 0));
    expect(await page.locator('[data-testid="version-card"][data-version="prompt-v3"]').count()).toBe(0);

    // Another process publishes a new version's trials to the embedded log; `passk serve` processes them.
    const log = createEmbeddedEventLog({ dataDir: join(dir, 'demo') });
    const at = Date.now();
    const events: TrialRecorded[] = dataset.flatMap((r, i) =>
      [0, 1, 2].map((attempt) => {
        const t = simulateTrial('prompt-v3', r.input, ['browser-test', attempt]);
        return {
          event_id: deterministicEventId(at + i, 'browser-test', r.row_id, attempt),
          type: 'TrialRecorded' as const,
          schema_version: 1,
          occurred_at: at + i,
          producer: 'browser-test',
          suite: SUITE,
          dataset_version: demo.dataset.version,
          row_id: r.row_id,
          run_id: 'browser-test',
          attempt,
          agent: { version: 'prompt-v3' },
          output: t.output,
          expected: r.expected,
          passed: t.output === r.expected,
          checks: t.checks,
          tags: r.tags,
        };
      }),
    );
    await log.publisher.publish(events);
    await log.close();

    await page.waitForSelector('[data-testid="version-card"][data-version="prompt-v3"]', { timeout: 60_000 });
    expect(await page.evaluate(() => window.notReloaded)).toBe(true);
    expect(await page.evaluate(() => Number(document.body.dataset.updates ?? 0))).toBeGreaterThan(updates);
    expect(await page.locator('#live').textContent()).toMatch(/^● live · updated \d\d:\d\d:\d\d UTC$/);
    // the live box as a person sees it, wide and on a phone
    const wide = page.viewportSize();
    await page.setViewportSize({ width: 1440, height: 900 });
    await shoot('overview-live-1440');
    await page.setViewportSize({ width: 390, height: 844 });
    await shoot('overview-live-390');
    if (wide) await page.setViewportSize(wide);
    const expected = events.filter((e) => e.passed).length / events.length;
    expect(Number(await metric('prompt-v3', 'mean_accuracy'))).toBeCloseTo(expected, 12);
    expect(pageErrors).toEqual([]);
  });
});
