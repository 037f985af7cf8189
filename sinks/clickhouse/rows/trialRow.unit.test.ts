import { describe, expect, it } from 'vitest';
import type { TrialRecorded } from '../../../schemas/events/trialRecorded.ts';
import { rowToTrial, trialToRow, TrialRow } from './trialRow.ts';

/** The row as the store returns it: times as epoch ms (the queries select toUnixTimestamp64Milli). */
const roundTrip = (e: TrialRecorded): TrialRecorded => {
  const row = trialToRow(e);
  return rowToTrial(TrialRow.parse({ ...row, occurred_at: e.occurred_at }));
};

const base: TrialRecorded = {
  event_id: '01JH0000000000000000000000',
  type: 'TrialRecorded',
  schema_version: 1,
  occurred_at: 1_767_225_600_123,
  producer: 'p',
  suite: 's',
  dataset_version: 'd',
  row_id: 'r',
  run_id: 'run',
  attempt: 0,
  agent: { version: 'v' },
  passed: null,
};

describe('TrialRecorded ⇄ trials row', () => {
  it('is lossless for a minimal event and for one with every field, including null vs absent', () => {
    expect(roundTrip(base)).toEqual(base);
    const full: TrialRecorded = {
      ...base,
      dataset_id: 'ds',
      agent: { id: 'a', version: 'v', model: 'm', prompt_hash: 'p', tools_hash: 't', config_hash: 'c' },
      input: '',
      output: null,
      expected: 'x',
      passed: true,
      score: 0,
      grader: { kind: 'llm_judge', id: 'j', version: '2' },
      checks: [
        { name: 'a', answer: null },
        { name: 'b', answer: 3, passed: false },
        { name: 'c', answer: 'y', passed: true },
      ],
      actions: [{ tool: 't' }, { tool: 'u', arguments: { q: [1, 'x'] } }],
      retrieved_refs: [],
      forbidden_actions: ['rm'],
      error_kind: null,
      failure_category: 'wrong_tool',
      error_message: "python3: can't open file",
      cost_usd: 0.25,
      tokens: { input: 1, output: 2 },
      latency_ms: 12.5,
      tags: ['must_not_break'],
    };
    expect(roundTrip(full)).toEqual(full);
  });

  it('sends times as seconds.millis text', () => {
    expect(trialToRow(base).occurred_at).toBe('1767225600.123');
    expect(trialToRow({ ...base, occurred_at: 5 }).occurred_at).toBe('0.005');
  });
});
