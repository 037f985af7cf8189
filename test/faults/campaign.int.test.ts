import { describe, expect, it } from 'vitest';
import type { StreamRowState } from '../../processors/folds/rowState.ts';
import {
  FAULT_KINDS,
  REGRESSION_SCHEDULES,
  REGRESSION_SEEDS,
  check,
  checkGates,
  ciSchedules,
  ciSeeds,
  flatTrials,
  interleave,
  liveVerdict,
  OPEN_COMPARISON,
  openGateWorkload,
  planSchedule,
  plannedMs,
  scheduleSeed,
  verdictsDiffer,
} from './campaign.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { candidateKey, keyOf } from '../../schemas/topics.ts';

const row = (id: string, attempts: [number, string][]): StreamRowState => ({
  suite: 's',
  dataset_version: 'd',
  agent_version: 'v',
  row_id: id,
  seq: attempts.length,
  occurred_at: 1,
  n: attempts.length,
  c: attempts.length,
  ungraded: 0,
  class: 'stable_correct',
  attempts: attempts.map(([attempt, event_id]) => ({
    event_id,
    run_id: 'r',
    attempt,
    occurred_at: 1,
    passed: true,
    output_hash: null,
    checks: [],
    forbidden_actions: [],
  })),
  tags: [],
});

describe('fault schedules', () => {
  it('come from the seed alone: 3–8 faults of the known kinds, the same for the same seed', () => {
    for (let i = 0; i < 50; i++) {
      const seed = scheduleSeed(7, i);
      const plan = planSchedule(seed);
      expect(planSchedule(seed)).toEqual(plan);
      expect(plan.faults.length).toBeGreaterThanOrEqual(3);
      expect(plan.faults.length).toBeLessThanOrEqual(8);
      for (const f of plan.faults) expect(FAULT_KINDS).toContain(f.kind);
    }
    expect(planSchedule(scheduleSeed(7, 0))).not.toEqual(planSchedule(scheduleSeed(7, 1)));
  });

  it('normal is the default tempo, and the regression schedules keep the faults that found their bugs', () => {
    expect(planSchedule(7_000_022, 'normal')).toEqual(planSchedule(7_000_022));
    // fix 1, 3, 4 (docs/reliability.md): broker 2 cut off while the processor starts, then lossy links to two brokers
    const labels = planSchedule(7_000_022).faults.map((f) => `${f.kind}-${f.node}`);
    expect(labels).toEqual(['partition-broker-2', 'loss-broker-1', 'loss-broker-2']);
  });

  it('fast: short gaps and holds, yet each kind keeps its long case (leader change, eviction)', () => {
    const plans = Array.from({ length: 300 }, (_, i) => planSchedule(scheduleSeed(23, i), 'fast'));
    const faults = plans.flatMap((p) => p.faults);
    for (const p of plans) {
      expect(p.faults.length).toBeGreaterThanOrEqual(3);
      expect(p.faults.length).toBeLessThanOrEqual(8);
    }
    for (const f of faults) {
      expect(f.gapMs).toBeGreaterThanOrEqual(200);
      expect(f.gapMs).toBeLessThanOrEqual(1_000);
      const long = f.holdMs > 2_000;
      expect(f.holdMs).toBeGreaterThanOrEqual(1_000);
      if (long && f.kind === 'pause-processor')
        expect(f.holdMs).toBeGreaterThan(10_000); // the 10 s session
      else if (long) expect(['kill-broker', 'pause-broker', 'partition-broker']).toContain(f.kind);
      if (long && f.kind !== 'pause-processor') expect(f.holdMs).toBeGreaterThan(9_000); // KRaft's broker session
    }
    for (const kind of ['kill-broker', 'pause-broker', 'partition-broker', 'pause-processor'])
      expect(faults.some((f) => f.kind === kind && f.holdMs > 9_000)).toBe(true);
    expect(new Set(faults.map((f) => f.kind))).toEqual(new Set(FAULT_KINDS));
    // on average well under half of a normal schedule's planned time
    const mean = (tempo: 'normal' | 'fast') =>
      Array.from({ length: 300 }, (_, i) => plannedMs(scheduleSeed(23, i), tempo)).reduce((a, b) => a + b) / 300;
    expect(mean('fast')).toBeLessThan(mean('normal') / 2);
  });
});

describe('the checker', () => {
  const replay = [
    row('a', [
      [0, 'e1'],
      [1, 'e2'],
    ]),
    row('b', [[0, 'e3']]),
  ];
  const inLog = new Set(['e1', 'e2', 'e3']);

  it('passes a processed state equal to the replay', () => {
    expect(check(replay, replay, inLog, inLog)).toEqual({ lost: 0, duplicated: 0, divergent: 0 });
  });

  it('counts an acknowledged event missing from the log, and one the processor never counted, as lost', () => {
    const processed = [
      row('a', [
        [0, 'e1'],
        [1, 'e2'],
      ]),
    ];
    expect(check(processed, replay, new Set([...inLog, 'e4']), inLog)).toEqual({
      lost: 2,
      duplicated: 0,
      divergent: 1,
    });
  });

  it('counts an event counted twice as duplicated', () => {
    const processed = [
      row('a', [
        [0, 'e1'],
        [1, 'e2'],
        [1, 'e2'],
      ]),
      row('b', [[0, 'e3']]),
    ];
    expect(check(processed, replay, inLog, inLog)).toEqual({ lost: 0, duplicated: 1, divergent: 1 });
  });
});

describe('the CI set', () => {
  it('is 12 schedules: the regression ones first, then short ones, every fault kind at least once', () => {
    const set = ciSchedules();
    const seeds = ciSeeds();
    expect(seeds).toHaveLength(12);
    expect(set.slice(0, REGRESSION_SCHEDULES.length)).toEqual([...REGRESSION_SCHEDULES]);
    expect(seeds.slice(0, REGRESSION_SEEDS.length)).toEqual([...REGRESSION_SEEDS]);
    expect(new Set(seeds).size).toBe(12);
    for (const s of set.slice(REGRESSION_SCHEDULES.length)) {
      expect(s.tempo).toBe('normal');
      expect(plannedMs(s.seed)).toBeLessThanOrEqual(36_000);
    }
    const kinds = new Set(set.flatMap((s) => planSchedule(s.seed, s.tempo).faults.map((f) => f.kind)));
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
  });

  it("keeps fix 6's schedule: a broker SIGKILLed within a second of the start, while passk ingest starts", () => {
    const fix6 = REGRESSION_SCHEDULES.find((s) => s.seed === 23_000_070)!;
    expect(fix6.tempo).toBe('fast');
    const [first] = planSchedule(fix6.seed, fix6.tempo).faults;
    expect(first).toMatchObject({ kind: 'kill-broker', node: 2 });
    expect(first!.gapMs).toBeLessThan(1_000);
  });
});

describe('the gate check', () => {
  it('counts decisions on one side only, in both directions', () => {
    expect(checkGates(['a', 'b'], ['a', 'b'])).toBe(0);
    expect(checkGates(['a'], ['a', 'b'])).toBe(1);
    expect(checkGates(['a', 'c'], ['a', 'b'])).toBe(2);
  });

  it('the gate inputs are spread through the trials, none dropped', () => {
    const mixed = interleave([1, 2, 3, 4, 5, 6], [10, 20]);
    expect(mixed).toEqual([1, 2, 3, 10, 4, 5, 6, 20]);
    expect(interleave([1], [10, 20, 30]).sort((a, b) => a - b)).toEqual([1, 10, 20, 30]);
  });
});

describe('the comparison without a published dataset (issue 26)', () => {
  it('has names from the seed alone, no dataset, and each version closed by a RunFinished of its trials', () => {
    const a = openGateWorkload(7_000_022);
    expect(openGateWorkload(7_000_022)).toEqual(a);
    expect(openGateWorkload(7_015_860).baseline).not.toBe(a.baseline);
    expect(a.events.some((e) => e.type === 'DatasetRowUpserted')).toBe(false);
    const declared = a.events.find((e) => e.type === 'ComparisonDeclared');
    expect(declared).toMatchObject({ comparison_id: OPEN_COMPARISON, suite: a.suite, confirmation_attempts: 0 });
    expect(declared).not.toHaveProperty('rows');
    expect(declared!.type === 'ComparisonDeclared' && declared!.dataset_id).toBeFalsy();
    for (const v of [a.baseline, a.candidate]) {
      const trials = a.events.filter((e) => e.type === 'TrialRecorded' && e.agent.version === v);
      const finished = a.events.filter((e) => e.type === 'RunFinished' && e.agent.version === v);
      expect(finished).toEqual([expect.objectContaining({ trials: trials.length, run_id: `run-${v}` })]);
    }
  });

  it("puts the baseline's closed run on another partition than the comparison in most CI schedules", () => {
    const apart = REGRESSION_SEEDS.filter((seed) => {
      const w = openGateWorkload(seed);
      const declared = w.events.find((e) => e.type === 'ComparisonDeclared')!;
      return partitionOf(keyOf(declared), 4) !== partitionOf(candidateKey(w.suite, w.baseline), 4);
    });
    expect(apart.length).toBeGreaterThanOrEqual(REGRESSION_SEEDS.length / 2);
  });

  it('compares the live verdict, rule by rule, with the one gate --from-store gives', () => {
    const line = (id: string, verdict: string, rules: [string, boolean][]) =>
      JSON.stringify(['e1', id, verdict, false, rules.map(([rule, passed]) => ({ rule, passed })), []]);
    const decisions = [
      JSON.stringify(['e0', 'other', ['r1']]),
      line(OPEN_COMPARISON, 'fail', [
        ['a', true],
        ['b', false],
      ]),
    ];
    const live = liveVerdict(decisions, OPEN_COMPARISON);
    expect(live).toEqual({
      verdict: 'fail',
      rules: [
        ['a', true],
        ['b', false],
      ],
    });
    expect(
      verdictsDiffer(live, {
        verdict: 'fail',
        rules: [
          ['a', true],
          ['b', false],
        ],
      }),
    ).toBe('');
    expect(
      verdictsDiffer(live, {
        verdict: 'fail',
        rules: [
          ['a', false],
          ['b', false],
        ],
      }),
    ).toContain('store fail');
    expect(
      verdictsDiffer(live, {
        verdict: 'pass',
        rules: [
          ['a', true],
          ['b', false],
        ],
      }),
    ).not.toBe('');
    expect(verdictsDiffer(liveVerdict(decisions, 'nope'), { verdict: 'pass', rules: [] })).toBe(
      "no live verdict; the store's is pass",
    );
    expect(verdictsDiffer(live, 'gate --from-store: exit 2')).toBe('gate --from-store: exit 2');
  });
});

describe('the other writers', () => {
  it('import and ingest trials of their own rows and versions, each with an event id', () => {
    const imported = flatTrials('i', 'imp');
    const posted = flatTrials('h', 'http');
    expect(imported).toHaveLength(30);
    expect(new Set([...imported, ...posted].map((t) => t.event_id)).size).toBe(60);
    expect(new Set(imported.map((t) => `${t.row_id}/${t.attempt}`)).size).toBe(30);
    expect(posted.every((t) => t.agent_version === 'http' && t.row_id.startsWith('h'))).toBe(true);
  });
});

describe('diagnose', () => {
  it('tells a busy process that catches SIGTERM from outside, and writes its native stacks', async () => {
    const { spawn } = await import('node:child_process');
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { diagnose } = await import('./campaign.ts');
    // a handler installed, then an event loop held: the handler can never run (seed 23728618's shape)
    const p = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); console.log('ready'); for (;;);"], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((r) => p.stdout.once('data', () => r()));
    const dir = mkdtempSync(join(tmpdir(), 'passk-diagnose-'));
    try {
      const seen = await diagnose(p.pid!, join(dir, 'hung.txt'));
      expect(seen).toMatch(/^state R \(running\), SIGTERM caught yes, blocked no, ignored no, cpu [01]\.\d\d s\/s/);
      expect(Number(/cpu ([\d.]+)/.exec(seen)![1])).toBeGreaterThan(0); // a share of a core, however loaded
      const file = readFileSync(join(dir, 'hung.txt'), 'utf8');
      expect(file).toMatch(/^SigCgt:/m);
      expect(file).toMatch(/cpu over 1 s: /);
      // the held event loop's JavaScript, through the inspector: the loop of the child's script
      expect(file).toMatch(/JavaScript stack:\n {2}at \S+ \(.*:1:\d+\)/);
      expect(seen).toMatch(/, in \S+ \(.*:1:\d+\), \{"sigterm":\[.*\]\}; see /);
    } finally {
      p.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
