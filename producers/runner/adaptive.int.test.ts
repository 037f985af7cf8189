import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runAdaptive } from '../../index.ts';
import type { AdaptiveRoundDecided, RunFinished, TrialRecorded } from '../../schemas/events/index.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';

const F = fileURLToPath(new URL('../../test/fixtures/own-agent/', import.meta.url));

describe('runAdaptive (the SDK equivalent of passk run --adaptive)', () => {
  it('publishes each round before its attempts, the attempts it grants, and one RunFinished at the end', async () => {
    const publisher = createMemoryPublisher();
    const rounds: number[] = [];
    const summary = await runAdaptive(
      { dataset: `${F}refunds.jsonl`, agent: `${F}agent-v2.ts`, adaptive: { maxK: 6 }, isolation: 'none' },
      { publisher, onRound: (r) => rounds.push(r.round) },
    );
    const of = <T>(type: string) => publisher.events.filter((e) => e.type === type) as T[];
    const decided = of<AdaptiveRoundDecided>('AdaptiveRoundDecided');
    const trials = of<TrialRecorded>('TrialRecorded');
    const finished = of<RunFinished>('RunFinished');
    expect(decided.map((d) => d.round)).toEqual(rounds);
    expect(decided[0]!.grants.every((g) => g.attempts === 2)).toBe(true);
    // q1, q5 run to 6; q2 (broken on v2) stops once it is classifiable; the other rows at 3
    expect(summary).toMatchObject({ attempts: 24, fixedAttempts: 36, status: 'completed' });
    expect(summary.stops).toEqual({ max_k: 2, must_not_break_failed: 1, classified: 3 });
    expect(trials).toHaveLength(24);
    expect(decided.reduce((a, d) => a + d.grants.reduce((b, g) => b + g.attempts, 0), 0)).toBe(24);
    expect(finished).toEqual([expect.objectContaining({ run_id: summary.runId, trials: 24, status: 'completed' })]);
    // every trial of a round comes after the round's decision in the log
    const at = (id: string) => publisher.events.findIndex((e) => e.event_id === id);
    for (const t of trials) {
      const round = decided.filter((d) => at(d.event_id) < at(t.event_id)).at(-1)!;
      expect(round.grants.some((g) => g.row_id === t.row_id)).toBe(true);
    }
    expect(summary.firstStage).toMatchObject({ first_k: 2, rows: 6 });
  });

  it('refuses a budget that cannot pay for the first stage', async () => {
    await expect(
      runAdaptive(
        { dataset: `${F}refunds.jsonl`, agent: `${F}agent-v1.ts`, adaptive: { budget: 11 }, isolation: 'none' },
        { publisher: createMemoryPublisher() },
      ),
    ).rejects.toThrow(/--budget 11 cannot pay for the first stage: 2 attempts × 6 rows = 12/);
  });
});
