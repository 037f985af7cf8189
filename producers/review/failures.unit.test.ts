import { describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import type { TraceSampled } from '../../schemas/events/index.ts';
import { failureSignals } from '../../processors/core/failureSignals.ts';
import { failureConfirmed } from './failures.ts';

const trace = (over: Partial<TraceSampled> = {}): TraceSampled => ({
  event_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
  type: 'TraceSampled',
  schema_version: 1,
  occurred_at: 1_700_000_000_000,
  producer: 'test',
  trace_id: 't1',
  agent_version: 'v3',
  segment: 'pro',
  input_fingerprint: 'fp-1',
  sampling: { policy: 'p', probability: 0.1 },
  payload: { input: 'refund please', output: 'approve' },
  ...over,
});

describe('review', () => {
  it('lists why a trace looks like a failure', () => {
    expect(failureSignals(trace())).toEqual([]);
    expect(
      failureSignals(
        trace({
          verdicts: [
            { grader: 'a', passed: true },
            { grader: 'b', passed: false },
          ],
          error_kind: 'crash',
          user_signals: { rating: 1 },
        }),
      ),
    ).toEqual(['grader:b', 'error:crash', 'negative_feedback']);
  });

  it('builds a valid FailureConfirmed whose id depends on the trace and dataset, not the time of the confirmation', () => {
    const a = failureConfirmed({ trace: trace(), datasetId: 'refunds', expected: 'deny', reviewer: 'ana', at: 1 });
    const b = failureConfirmed({ trace: trace(), datasetId: 'refunds', expected: 'deny', reviewer: 'ana', at: 999 });
    expect(a).toMatchObject({ type: 'FailureConfirmed', trace_id: 't1', input: 'refund please', expected: 'deny' });
    expect(a.event_id).toBe(b.event_id);
    expect(
      failureConfirmed({ trace: trace(), datasetId: 'other', expected: 'deny', reviewer: 'ana', at: 1 }).event_id,
    ).not.toBe(a.event_id);
    expect(() =>
      failureConfirmed({ trace: trace({ payload: {} }), datasetId: 'd', expected: 'x', reviewer: 'r', at: 1 }),
    ).toThrow(InputError);
    expect(() => failureConfirmed({ trace: trace(), datasetId: 'd', expected: '  ', reviewer: 'r', at: 1 })).toThrow(
      /expected/,
    );
  });
});
