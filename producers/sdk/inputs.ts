import type { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';
import { JudgmentRecorded, LabelRecorded } from '../../schemas/events/judgments.ts';
import { RunFinished } from '../../schemas/events/runFinished.ts';
import { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { TrialRecorded } from '../../schemas/events/trialRecorded.ts';

/** Fields the recorder fills in; a caller may still pass `event_id` and `occurred_at`. */
type Envelope = 'event_id' | 'type' | 'schema_version' | 'occurred_at' | 'producer';
type Input<S extends z.ZodType> = Omit<z.input<S>, Envelope> & { event_id?: string; occurred_at?: number };

export type TrialInput = Input<typeof TrialRecorded>;
export type JudgmentInput = Input<typeof JudgmentRecorded>;
export type LabelInput = Input<typeof LabelRecorded>;
export type TraceInput = Input<typeof TraceSampled>;
/** Everything but `run_id` can be inferred from the trials this recorder saw for the run. */
export type RunFinishedInput = Partial<Input<typeof RunFinished>> & { run_id: string };

export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

/** Input refused before anything was sent; `issues` names every failing field. */
export class InvalidRecord extends InputError {
  constructor(
    readonly eventType: string,
    readonly issues: readonly FieldIssue[],
  ) {
    super(
      `invalid ${eventType}: ${issues
        .slice(0, 5)
        .map((i) => `${i.field}: ${i.message}`)
        .join('; ')}`,
      { field: issues[0]?.field },
    );
    this.name = 'InvalidRecord';
  }
}

/** Strict versions: a misspelled field is an error, not silently dropped. */
export const STRICT = {
  TrialRecorded: TrialRecorded.strict(),
  JudgmentRecorded: JudgmentRecorded.strict(),
  LabelRecorded: LabelRecorded.strict(),
  TraceSampled: TraceSampled.strict(),
  RunFinished: RunFinished.strict(),
} as const;
export type StrictType = keyof typeof STRICT;

/** Parses a built event; throws `InvalidRecord` naming each failing field. */
export const parseRecord = <T extends StrictType>(type: T, value: unknown): z.output<(typeof STRICT)[T]> => {
  const result = STRICT[type].safeParse(value);
  if (result.success) return result.data as z.output<(typeof STRICT)[T]>;
  throw new InvalidRecord(
    type,
    result.error.issues.map((i) => ({
      field: i.path.map(String).join('.') || (i.code === 'unrecognized_keys' ? i.keys.join(',') : '(root)'),
      message: i.message,
    })),
  );
};
