import type { Command } from 'commander';
import { adaptiveRunsOf, type Group } from '../../processors/core/index.ts';
import { DEFAULT_ADAPTIVE, firstStageOfRuns } from '../../processors/core/adaptive.ts';
import { readAdaptiveRounds } from '../../producers/adaptiveRounds.ts';
import { withEventLog } from '../context.ts';

/**
 * Adaptive runs on the log (their AdaptiveRoundDecided rounds): run id → first-stage k. With --from-store only; a
 * log that cannot be read gives none (the run ids `adaptive-…` and the default first stage still apply).
 */
export const adaptiveRounds = async (cmd: Command): Promise<Map<string, number>> =>
  (await withEventLog(cmd, readAdaptiveRounds).catch(() => undefined)) ?? new Map<string, number>();

/** The first stage of the adaptive runs in these groups, from their rounds (the smallest); else the default. */
export const firstKOf = (
  groups: readonly Group[],
  rounds: ReadonlyMap<string, number>,
): { k: number; from: 'rounds' | 'default' } =>
  firstStageOfRuns(
    groups.flatMap((g) => adaptiveRunsOf(g, [...rounds.keys()])),
    rounds,
  );

/**
 * Where an adaptive version's first stage came from, as the output says it: --first-stage, the run's rounds on the
 * log, or the default, which the reader of trial files (or of a store whose log lacks the rounds) cannot check.
 */
export const firstStageSource = (flag: number | undefined, found: ReturnType<typeof firstKOf>): string =>
  flag !== undefined
    ? 'from --first-stage'
    : found.from === 'rounds'
      ? "the run's --first-k, from its rounds on the log"
      : `the runner's default --first-k ${DEFAULT_ADAPTIVE.firstK}: the run's own is in its rounds on the event log, ` +
        'which only --from-store reads; --first-stage K sets another';
