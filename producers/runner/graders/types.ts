import type { Check, TrialRecorded } from '../../../schemas/events/trialRecorded.ts';
import type { JudgmentInput } from '../../sdk/inputs.ts';
import type { AgentResult } from '../agents/types.ts';
import type { DatasetRow } from '../dataset.ts';

export interface GradeInput {
  readonly row: DatasetRow;
  /** The agent's output as text (JSON for a non-string output). */
  readonly output: string | undefined;
  /** The agent's output as it returned it. */
  readonly value: unknown;
  readonly result: AgentResult;
  /** Event id of the trial being graded: the item a judge's verdict is about. */
  readonly trialEventId: string;
}

export interface Grade {
  readonly passed: boolean | null;
  readonly score?: number | null;
  /** Intermediate checks the grader saw (replacing the agent's own list when given). */
  readonly checks?: Check[];
  /** A judge's verdict, recorded as its own JudgmentRecorded event. */
  readonly judgment?: JudgmentInput;
  readonly error_kind?: string;
}

export interface Grader {
  /** Recorded on every trial it grades. */
  readonly spec: NonNullable<TrialRecorded['grader']>;
  /** Throws InputError when a row cannot be graded this way (checked before any trial runs). */
  check(row: DatasetRow): void;
  /** Throws an error with `retriable: true` when grading itself failed for a transient reason (a judge down). */
  grade(input: GradeInput): Promise<Grade>;
}
