import fc from 'fast-check';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { deterministicEventId } from '../../schemas/ids.ts';

/** Builders and arbitraries shared by the processors' tests. */
export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export interface TrialSpec {
  suite?: string;
  dataset_version?: string;
  row: string;
  version: string;
  run?: string;
  attempt: number;
  passed: boolean | null;
  at?: number;
  id?: string;
  output?: string | null;
  checks?: { name: string; answer: string | number | boolean | null }[];
  tags?: string[];
}

export const trial = (s: TrialSpec): TrialRecorded => {
  const at = s.at ?? T0 + s.attempt * 1000;
  const t: TrialRecorded = {
    event_id:
      s.id ?? deterministicEventId(at, 'trial', s.suite ?? 'refunds', s.row, s.version, s.run ?? 'run-1', s.attempt),
    type: 'TrialRecorded',
    schema_version: 1,
    occurred_at: at,
    producer: 'test',
    suite: s.suite ?? 'refunds',
    dataset_version: s.dataset_version ?? 'd1',
    row_id: s.row,
    run_id: s.run ?? 'run-1',
    attempt: s.attempt,
    agent: { version: s.version },
    passed: s.passed,
  };
  if (s.output !== undefined) t.output = s.output;
  if (s.checks) t.checks = s.checks;
  if (s.tags) t.tags = s.tags;
  return t;
};

/**
 * A pool of distinct trials (some sharing a (run, attempt) slot under different event ids), and a
 * stream drawn from it with repeats, in any order: what an at-least-once log can deliver.
 */
export const arbTrialPool = fc
  .array(
    fc.record({
      row: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
      version: fc.constantFrom('v1', 'v2'),
      run: fc.constantFrom('run-1', 'run-2'),
      attempt: fc.integer({ min: 0, max: 3 }),
      passed: fc.constantFrom(true, false, null),
      at: fc.integer({ min: 0, max: 10_000 }),
      output: fc.constantFrom('approve', 'deny', null),
      check: fc.constantFrom('yes', 'no'),
      salt: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 1, maxLength: 30 },
  )
  .map((specs) =>
    specs.map((s) =>
      trial({
        row: s.row,
        version: s.version,
        run: s.run,
        attempt: s.attempt,
        passed: s.passed,
        at: T0 + s.at,
        id: deterministicEventId(
          T0 + s.at,
          s.row,
          s.version,
          s.run,
          s.attempt,
          s.salt,
          String(s.passed),
          String(s.output),
          s.check,
        ),
        output: s.output,
        checks: [{ name: 'return_window', answer: s.check }],
      }),
    ),
  );

export const arbTrialStream = arbTrialPool.chain((pool) =>
  fc
    .array(fc.nat(pool.length - 1), { minLength: 0, maxLength: 60 })
    .map((picks) => ({ pool, stream: picks.map((i) => pool[i]!) })),
);

export const trace = (s: {
  id?: string;
  at: number;
  version?: string;
  segment?: string;
  fingerprint?: string;
  probability?: number;
  passed: boolean | null;
}): TraceSampled => ({
  event_id: s.id ?? deterministicEventId(s.at, 'trace', s.fingerprint ?? 'f', s.at, String(s.passed)),
  type: 'TraceSampled',
  schema_version: 1,
  occurred_at: s.at,
  producer: 'test',
  trace_id: `t-${s.at}-${s.fingerprint ?? 'f'}`,
  agent_version: s.version ?? 'v1',
  segment: s.segment ?? 'all',
  input_fingerprint: s.fingerprint ?? 'f',
  sampling: { policy: 'uniform', probability: s.probability ?? 1 },
  verdicts: [{ grader: 'online', passed: s.passed }],
});
