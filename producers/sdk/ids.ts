import { deterministicEventId, EVENT_ID_PATTERN, eventIdTime, newEventId } from '../../schemas/ids.ts';

/** The identity of one attempt: the same attempt always gets the same event id. */
export interface TrialIdentity {
  readonly suite: string;
  readonly dataset_version: string;
  readonly agent: { readonly version: string };
  readonly run_id: string;
  readonly row_id: string;
  readonly attempt: number;
}

const ULID_SUFFIX = /([0-9A-HJKMNP-TV-Z]{26})$/;

/**
 * The time part of deterministic ids of a run: the time of its run id when that ends in a ULID
 * (as run ids made by `newRunId` do), else 0. Never the wall clock, which would change on a re-run.
 */
export const runTime = (runId: string): number => {
  const m = ULID_SUFFIX.exec(runId.toUpperCase());
  if (!m || !EVENT_ID_PATTERN.test(m[1]!)) return 0;
  try {
    return eventIdTime(m[1]!);
  } catch {
    return 0;
  }
};

/** A new run id, `run-<ULID>`, whose time part is the start of the run. */
export const newRunId = (atMs: number = Date.now()): string => `run-${newEventId(atMs)}`;

/** Deterministic id of a trial from (suite, dataset version, agent version, run, row, attempt). */
export const trialEventId = (t: TrialIdentity): string =>
  deterministicEventId(
    runTime(t.run_id),
    'TrialRecorded',
    t.suite,
    t.dataset_version,
    t.agent.version,
    t.run_id,
    t.row_id,
    t.attempt,
  );

/**
 * Deterministic id of an end-of-run marker. Status and trial count are part of it: a run marked partial,
 * then resumed and completed, gets a second marker, while marking the same state twice counts once.
 */
export const runFinishedEventId = (
  r: Omit<TrialIdentity, 'row_id' | 'attempt'> & { status: string; trials: number },
): string =>
  deterministicEventId(
    runTime(r.run_id),
    'RunFinished',
    r.suite,
    r.dataset_version,
    r.agent.version,
    r.run_id,
    r.status,
    r.trials,
  );
