import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';
import type { Recorder } from '../sdk/recorder.ts';
import type { SamplingPolicyInput } from './policy.ts';
import type { Redactor } from './redact.ts';
import { createTraceSampler, type SegmentStats } from './sampler.ts';

/** One production request per line of a traces file. */
export const TraceLine = z.object({
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
  user_signals: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  error_kind: z.string().nullable().optional(),
  tags: z.array(z.string().min(1)).optional(),
  occurred_at: z.number().int().nonnegative().optional(),
});

export interface SampleFileReport {
  readonly policy: string;
  readonly read: number;
  readonly segments: Record<string, SegmentStats>;
}

/** `passk sample`: applies a policy to a file of traces; kept ones are redacted and recorded. */
export const sampleFile = async (
  file: string,
  opts: {
    policy: SamplingPolicyInput;
    recorder: Pick<Recorder, 'recordTrace' | 'flush'>;
    seed?: number;
    redactors?: readonly Redactor[];
  },
): Promise<SampleFileReport> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file });
  }
  const lines = text.split(/\r?\n/).flatMap((raw, i) => {
    if (raw.trim() === '') return [];
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new InputError(`not valid JSON (${(e as Error).message})`, { file, line: i + 1 });
    }
    const r = TraceLine.safeParse(value);
    if (!r.success)
      throw new InputError(r.error.issues[0]!.message, {
        file,
        line: i + 1,
        field: r.error.issues[0]!.path.join('.') || '(line)',
      });
    return [r.data];
  });
  // Event time orders the windows of a cap: offer in time order.
  lines.sort((a, b) => (a.occurred_at ?? 0) - (b.occurred_at ?? 0));
  const sampler = createTraceSampler({
    policy: opts.policy,
    recorder: opts.recorder,
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    ...(opts.redactors ? { redactors: opts.redactors } : {}),
    clock: () => 0,
  });
  for (const line of lines) sampler.offer(line);
  await sampler.flush();
  return { policy: sampler.policyId, read: lines.length, segments: Object.fromEntries(sampler.stats) };
};
