import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';
import { Action } from '../../schemas/events/trialRecorded.ts';
import { checkUtf8 } from '../files/utf8.ts';
import { checkIdentity } from '../redaction/trace.ts';
import type { Recorder } from '../sdk/recorder.ts';
import type { SamplingPolicyInput } from './policy.ts';
import type { Redactor } from './redact.ts';
import { createTraceSampler, type SegmentStats } from './sampler.ts';

/**
 * One production request per line of a traces file. Strict, as `passk import` is: a misspelled field
 * (`"verdict"` for `"verdicts"`) is an error naming it, never dropped.
 */
export const TraceLine = z.strictObject({
  trace_id: z.union([z.string().min(1), z.number()]).transform(String),
  agent_version: z.string().min(1),
  segment: z.string().min(1).optional(),
  input: z.unknown(),
  output: z.unknown().optional(),
  verdicts: z
    .array(
      z.object({ grader: z.string().min(1), passed: z.boolean().nullable(), score: z.number().nullable().optional() }),
    )
    .optional(),
  /** The tool calls the request made; arguments are redacted like the input. */
  actions: z.array(Action).optional(),
  tokens: z.object({ input: z.number().int().nonnegative(), output: z.number().int().nonnegative() }).optional(),
  user_signals: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  error_kind: z.string().nullable().optional(),
  tags: z.array(z.string().min(1)).optional(),
  occurred_at: z.number().int().nonnegative().optional(),
});

export interface SampleFileReport {
  readonly policy: string;
  readonly read: number;
  readonly segments: Record<string, SegmentStats>;
  /**
   * Kept traces dated before the store's trace retention (`retentionDays` given, or `retention` asked: a kept trace
   * is dated more than a day back): recorded in the log, but the store drops them at once, so `passk review` will not
   * list them. `assumed`: the retention is not the store's own, which could not be read (the default a new store
   * gets, unless changed); absent for a retention of 0 (forever).
   */
  readonly beyondRetention?: {
    readonly traces: number;
    readonly days: number;
    readonly before: number;
    readonly assumed: boolean;
  };
}

/** The store's trace retention as a command knows it: days (0 = forever), read from the store or `assumed`. */
export type TraceRetention = { readonly days: number; readonly assumed: boolean };

const DAY_MS = 86_400_000;

/** `passk sample`: applies a policy to a file of traces; kept ones are redacted and recorded. */
export const sampleFile = async (
  file: string,
  opts: {
    policy: SamplingPolicyInput;
    recorder: Pick<Recorder, 'recordTrace' | 'flush'>;
    seed?: number;
    redactors?: readonly Redactor[];
    /** The time the file is read: the event time of a line without `occurred_at`. @default Date.now() */
    now?: number;
    /** The store's trace retention in days (0 = forever): kept traces older than it are counted in the report. */
    retentionDays?: number;
    /**
     * The store's trace retention, asked once the file is sampled and only when a kept trace is dated more than a day
     * back (the shortest retention): reading it may open the store. `retentionDays` wins when both are given.
     */
    retention?: () => Promise<TraceRetention>;
  },
): Promise<SampleFileReport> => {
  const now = opts.now ?? Date.now();
  // the event times of the kept traces a retention of a day or more could drop
  const old: number[] = [];
  const recorder: Pick<Recorder, 'recordTrace' | 'flush'> = {
    recordTrace: (t) => {
      const at = t.occurred_at ?? now;
      if (at < now - DAY_MS) old.push(at);
      return opts.recorder.recordTrace(t);
    },
    flush: () => opts.recorder.flush(),
  };
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw new InputError(`cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file });
  }
  checkUtf8(bytes, file);
  const text = bytes.toString('utf8');
  const lines = text.split(/\r?\n/).flatMap((raw, i) => {
    if (raw.trim() === '') return [];
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new InputError(`not valid JSON (${(e as Error).message})`, { file, line: i + 1 });
    }
    const r = TraceLine.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const unknown = issue.code === 'unrecognized_keys' ? issue.keys : [];
      throw new InputError(
        unknown.length > 0
          ? `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (the fields: ${Object.keys(TraceLine.shape).join(', ')})`
          : issue.message,
        { file, line: i + 1, field: unknown[0] ?? (issue.path.join('.') || '(line)') },
      );
    }
    for (const field of ['trace_id', 'agent_version'] as const)
      try {
        checkIdentity(field, r.data[field], opts.redactors);
      } catch (e) {
        throw new InputError((e as Error).message.replace(/^field [^:]*: /, ''), { file, line: i + 1, field });
      }
    return [r.data];
  });
  // Event time orders the windows of a cap: offer in time order. A line without one happened when it was
  // received, now: never at time zero, which the trace retention would drop at once.
  lines.sort((a, b) => (a.occurred_at ?? now) - (b.occurred_at ?? now));
  const sampler = createTraceSampler({
    policy: opts.policy,
    recorder,
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    ...(opts.redactors ? { redactors: opts.redactors } : {}),
    clock: () => now,
  });
  for (const line of lines) sampler.offer(line);
  await sampler.flush();
  const retention: TraceRetention | undefined =
    opts.retentionDays !== undefined
      ? { days: opts.retentionDays, assumed: false }
      : old.length > 0 && opts.retention
        ? await opts.retention()
        : undefined;
  const before = retention?.days ? now - retention.days * DAY_MS : undefined;
  let expired = 0;
  for (const at of old) if (before !== undefined && at < before) expired++;
  return {
    policy: sampler.policyId,
    read: lines.length,
    segments: Object.fromEntries(sampler.stats),
    ...(before === undefined
      ? {}
      : { beyondRetention: { traces: expired, days: retention!.days, before, assumed: retention!.assumed } }),
  };
};
