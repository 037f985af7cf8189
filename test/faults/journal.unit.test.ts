import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appendJournal,
  failed,
  kindOf,
  parseJournal,
  quantile,
  readJournal,
  summarize,
  type JournalEntry,
} from './journal.ts';

const entry = (seed: number, over: Partial<JournalEntry> = {}): JournalEntry => ({
  seed,
  tempo: 'fast',
  faults: ['kill-broker-2', 'loss-broker-1(26)', 'rebalance'],
  acked: 100,
  lost: 0,
  dup: 0,
  div: 0,
  recoveryMs: 1_000 * seed,
  misread: 0,
  groups: 0,
  ms: 20_000,
  at: '2026-12-01T21:00:00.000Z',
  exits: 0,
  stop: 'clean',
  ...over,
});

describe('the journal', () => {
  it('reads back what was appended, one line a schedule; a missing file is an empty journal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-journal-'));
    try {
      const file = join(dir, 'campaign.jsonl');
      expect(readJournal(file)).toEqual([]);
      appendJournal(file, entry(1));
      appendJournal(file, entry(2, { lost: 3 }));
      expect(readJournal(file)).toEqual([entry(1), entry(2, { lost: 3 })]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the file, line and field of a bad line', () => {
    const good = JSON.stringify(entry(1));
    expect(() => parseJournal(`${good}\n{"seed":`, 'c.jsonl')).toThrow(/^c\.jsonl, line 2: not valid JSON/);
    const bad = JSON.stringify({ ...entry(1), lost: -1 });
    expect(() => parseJournal(`${good}\n\n${bad}\n`, 'c.jsonl')).toThrow(/^c\.jsonl, line 3, field lost: /);
  });
});

describe('the summary', () => {
  it('counts faults by kind, recovery quantiles, failures and misreads, and ends with the totals line', () => {
    const lines = summarize(
      [
        entry(1),
        entry(2, { misread: 2 }),
        entry(3, { lost: 1, div: 1 }),
        entry(4, { recoveryMs: null, div: 1, error: 'x' }),
      ],
      { brokers: 3, runMs: 90_000 },
    );
    expect(lines).toEqual([
      'by kind: kill-broker 4, loss-broker 4, rebalance 4',
      'recovery s: p50 2.0, p95 3.0, max 3.0; 12 faults',
      'schedule s: mean 20.0, max 20.0; run 90 s, cluster included',
      'misread (1): 2(2)',
      'failed (2): 3 4',
      'faults: 4 schedules, 3 brokers, 400 acknowledged, 1 lost, 0 duplicated, 2 divergent',
    ]);
    // 80 columns, but for the totals line, whose words issue #17 fixes
    for (const l of lines.slice(0, -1)) expect(l.length).toBeLessThanOrEqual(80);
  });

  it('of no schedules: no quantiles, zero totals', () => {
    expect(summarize([], { brokers: 3 }).at(-1)).toBe(
      'faults: 0 schedules, 3 brokers, 0 acknowledged, 0 lost, 0 duplicated, 0 divergent',
    );
    expect(summarize([], { brokers: 3 })).toContain('recovery s: p50 -, p95 -, max -; 0 faults');
  });

  it('a failure is anything lost, duplicated, divergent, a group left or no recovery', () => {
    expect(failed(entry(1))).toBe(false);
    expect(failed(entry(1, { misread: 2 }))).toBe(false);
    for (const over of [{ lost: 1 }, { dup: 1 }, { div: 1 }, { groups: 1 }, { error: 'timeout' }])
      expect(failed(entry(1, over))).toBe(true);
  });

  it('kinds and quantiles', () => {
    expect(['loss-broker-1(26)', 'throttle-broker-3(64)', 'kill-processor', 'pause-broker-2'].map(kindOf)).toEqual([
      'loss-broker',
      'throttle-broker',
      'kill-processor',
      'pause-broker',
    ]);
    expect(quantile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(quantile([5, 1, 4, 2, 3], 1)).toBe(5);
    expect(quantile([], 0.5)).toBeUndefined();
  });
});
