import type { z } from 'zod';
import type { EventPublisher } from '../../processors/ports.ts';
import type { JudgmentRecorded } from '../../schemas/events/judgments.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId, newEventId } from '../../schemas/ids.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { type BatcherOptions, type BatcherStats, createBatcher } from './batcher.ts';
import { runFinishedEventId, trialEventId } from './ids.ts';
import {
  InvalidRecord,
  type STRICT,
  type StrictType,
  type JudgmentInput,
  type LabelInput,
  parseRecord,
  type RunFinishedInput,
  type TraceInput,
  type TrialInput,
} from './inputs.ts';
import { KEY_SEP } from '../../schemas/topics.ts';
import { InputError } from '../../schemas/errors.ts';
import type { Redactor } from '../redaction/text.ts';
import { redactTraceInput } from '../redaction/trace.ts';
import { createSlotMemory } from '../trialSlots.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { MAX_NESTING, textProblem } from '../../schemas/wellFormed.ts';

export interface RecorderOptions extends Omit<BatcherOptions, 'publisher'> {
  readonly publisher: EventPublisher;
  /** Written into every event. @default 'passk-sdk/<version>' */
  readonly producer?: string;
  /** Event time for events that do not carry `occurred_at`. @default Date.now */
  readonly clock?: () => number;
  /**
   * Run over every text of a trace given to `recordTrace` (what the sampler redacted already is not redacted
   * again). @default DEFAULT_REDACTORS
   */
  readonly redactors?: readonly Redactor[];
  /**
   * Trials remembered by attempt slot, to refuse a conflicting re-send (the same attempt with other content, or
   * under another event id) as the ingest API does. @default 1_000_000
   */
  readonly rememberTrials?: number;
}

/**
 * Records results into passk. Every `record*` validates synchronously (throwing `InvalidRecord`
 * that names the failing fields, before anything is sent), buffers the event, and returns a promise
 * of its event id that resolves once the event is durable. Awaiting it is optional: `flush()` and
 * `close()` wait for everything and report failures.
 */
export interface Recorder {
  /**
   * Throws `InvalidRecord` for a trial that answers an attempt this recorder already recorded otherwise (another
   * event id, or other content: field and both event ids named); the same trial again is a duplicate, sent again.
   */
  recordTrial(trial: TrialInput): Promise<string>;
  recordJudgment(judgment: JudgmentInput): Promise<string>;
  recordLabel(label: LabelInput): Promise<string>;
  /**
   * A production trace that was already sampled (see `createTraceSampler`). Its texts are redacted here if the
   * sampler did not; a trace id or agent version holding personal data is refused.
   */
  recordTrace(trace: TraceInput): Promise<string>;
  /** Marks a run finished, filling counts and identity from the trials recorded here; then flushes. */
  markRunFinished(run: RunFinishedInput): Promise<string>;
  /** Resolves once every event recorded so far is durable. */
  flush(): Promise<void>;
  /** Flushes and stops. Events that could not be sent come back in an `UnsentEvents` error. */
  close(): Promise<void>;
  readonly pending: number;
  readonly stats: Readonly<BatcherStats>;
}

const PLACEHOLDER_ID = '0'.repeat(26);

interface RunSeen {
  suite: string;
  dataset_id?: string;
  dataset_version: string;
  agent: TrialRecorded['agent'];
  trials: number;
  ungraded: number;
  rows: Set<string>;
}

export const createRecorder = (opts: RecorderOptions): Recorder => {
  const producer = opts.producer ?? `passk-sdk/${PRODUCER_VERSION}`;
  const clock = opts.clock ?? Date.now;
  const batcher = createBatcher(opts);
  const runs = new Map<string, RunSeen>();
  const slots = createSlotMemory(opts.rememberTrials ?? 1_000_000, 'recorded');

  /** Validates with a placeholder id first, so an id is only derived from fields that passed. */
  const build = <T extends StrictType>(
    type: T,
    input: unknown,
    idOf: (event: z.output<(typeof STRICT)[T]>) => string,
  ): z.output<(typeof STRICT)[T]> => {
    const raw = asObject(type, input);
    const event = parseRecord(type, {
      ...raw,
      type,
      schema_version: 1,
      producer,
      occurred_at: raw.occurred_at ?? clock(),
      event_id: raw.event_id ?? PLACEHOLDER_ID,
    });
    if (raw.event_id === undefined) event.event_id = idOf(event);
    return event;
  };

  /**
   * Buffers an event `build` made: parsed by its strict schema, so the log serializes it without a second parse
   * (half the validation on the OTLP receiver's path, issue #25), unless it holds text no store can keep (a lone
   * surrogate, too deep): that one the log validates, and refuses as it always did.
   */
  const add = (event: PasskEvent): Promise<string> =>
    batcher.add(event, { trusted: textProblem(event, MAX_NESTING) === undefined });

  const asObject = (type: string, value: unknown): Record<string, unknown> => {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new InvalidRecord(type, [{ field: '(root)', message: 'expected an object' }]);
    return value as Record<string, unknown>;
  };

  const noteTrial = (t: TrialRecorded): void => {
    const seen = runs.get(t.run_id) ?? {
      suite: t.suite,
      dataset_id: t.dataset_id,
      dataset_version: t.dataset_version,
      agent: t.agent,
      trials: 0,
      ungraded: 0,
      rows: new Set<string>(),
    };
    seen.trials++;
    if (t.passed === null) seen.ungraded++;
    seen.rows.add(t.row_id);
    runs.set(t.run_id, seen);
  };

  return {
    recordTrial(input) {
      const trial = build('TrialRecorded', input, trialEventId);
      // one answer per trial identity: a conflicting re-send is refused before anything is sent
      const conflict = slots.conflictOf(trial);
      if (conflict) throw new InvalidRecord('TrialRecorded', [{ field: conflict.field, message: conflict.reason }]);
      // the same trial again is sent again (a duplicate the processors ignore), not counted again in its run
      if (!slots.knows(trial)) noteTrial(trial);
      slots.note(trial);
      return add(trial);
    },
    recordJudgment(input) {
      const given = (input as { occurred_at?: number } | null)?.occurred_at ?? 0;
      const id = (j: JudgmentRecorded) =>
        deterministicEventId(
          given,
          'JudgmentRecorded',
          j.item_id,
          j.judge.id,
          j.judge.version ?? '',
          j.rubric_version,
          j.repeat ?? 0,
          (j.order ?? []).join(KEY_SEP),
        );
      return add(build('JudgmentRecorded', input, id));
    },
    recordLabel(input) {
      // A new label on the same item is a correction, a new event: a fresh id unless the caller gives one.
      return add(build('LabelRecorded', input, (l) => newEventId(l.occurred_at)));
    },
    recordTrace(input) {
      const given = (input as { occurred_at?: number } | null)?.occurred_at ?? 0;
      let clean: TraceInput;
      try {
        clean = redactTraceInput(input, opts.redactors);
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        const field = e.where.field ?? '(root)';
        throw new InvalidRecord('TraceSampled', [{ field, message: e.message.replace(/^field [^:]*: /, '') }]);
      }
      return add(build('TraceSampled', clean, (t) => deterministicEventId(given, 'TraceSampled', t.trace_id)));
    },
    async markRunFinished(input) {
      const raw = asObject('RunFinished', input) as RunFinishedInput;
      const seen = runs.get(raw.run_id);
      const inferred = seen && {
        suite: seen.suite,
        ...(seen.dataset_id === undefined ? {} : { dataset_id: seen.dataset_id }),
        dataset_version: seen.dataset_version,
        agent: seen.agent,
        trials: seen.trials,
        ungraded: seen.ungraded,
        rows: seen.rows.size,
      };
      const event = build('RunFinished', { status: 'completed', trials: 0, ...inferred, ...raw }, runFinishedEventId);
      const receipt = add(event);
      await batcher.flush();
      return receipt;
    },
    flush: () => batcher.flush(),
    close: () => batcher.close(),
    get pending() {
      return batcher.pending;
    },
    get stats() {
      return batcher.stats;
    },
  };
};
