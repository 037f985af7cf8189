import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';

/**
 * Builders for tests of the core (kept here because processors/ may not import test/).
 * Not part of the public surface: index.ts does not export it.
 */
export type TrialSpec = {
  row: string;
  version: string;
  passed: boolean | null;
  attempt?: number;
  run?: string;
  suite?: string;
  dataset?: string;
  at?: number;
  output?: string;
  checks?: Record<string, string | number | boolean | null>;
  tags?: string[];
  forbidden?: string[];
};

export const trial = (s: TrialSpec): TrialRecorded => {
  const run = s.run ?? 'run-1';
  const attempt = s.attempt ?? 0;
  const suite = s.suite ?? 'refunds';
  const dataset = s.dataset ?? 'ds-1';
  return {
    event_id: deterministicEventId(s.at ?? 0, suite, dataset, s.version, run, s.row, attempt),
    type: 'TrialRecorded',
    schema_version: 1,
    occurred_at: s.at ?? 0,
    producer: 'testkit',
    suite,
    dataset_version: dataset,
    row_id: s.row,
    run_id: run,
    attempt,
    agent: { version: s.version },
    passed: s.passed,
    ...(s.output === undefined ? {} : { output: s.output }),
    ...(s.checks ? { checks: Object.entries(s.checks).map(([name, answer]) => ({ name, answer })) } : {}),
    ...(s.tags ? { tags: s.tags } : {}),
    ...(s.forbidden ? { forbidden_actions: s.forbidden } : {}),
  };
};

/** One row's attempts from a verdict string: "+" pass, "-" fail, "?" ungraded; e.g. row('r1', 'v1', '++-'). */
export const row = (id: string, version: string, verdicts: string, extra: Partial<TrialSpec> = {}): TrialRecorded[] =>
  [...verdicts].map((v, attempt) =>
    trial({ row: id, version, attempt, passed: v === '+' ? true : v === '-' ? false : null, ...extra }),
  );
