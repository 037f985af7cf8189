import { z } from 'zod';
import { envelope, Id, Tags } from '../envelope.ts';
import { Action } from './trialRecorded.ts';

/** A sampled production request, with the probability it had of being kept. */
export const TraceSampled = z.object({
  ...envelope('TraceSampled'),
  trace_id: Id,
  agent_version: Id,
  segment: z.string().min(1),
  /** Normalized fingerprint of the input: the same request gets the same fingerprint. */
  input_fingerprint: z.string().min(1),
  sampling: z.object({
    policy: z.string().min(1),
    /** Inclusion probability in (0, 1]; weights are 1/probability (Horvitz–Thompson). */
    probability: z.number().gt(0).lte(1),
  }),
  verdicts: z
    .array(
      z.object({ grader: z.string().min(1), passed: z.boolean().nullable(), score: z.number().nullable().optional() }),
    )
    .optional(),
  user_signals: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  error_kind: z.string().nullable().optional(),
  /** The tool calls the request made (an OTLP trace's `execute_tool` child spans), arguments redacted. */
  actions: z.array(Action).optional(),
  /** Tokens the request used (an OTLP trace's `gen_ai.usage.*`, summed over its model calls). */
  tokens: z.object({ input: z.number().int().nonnegative(), output: z.number().int().nonnegative() }).optional(),
  /** Redacted before it left the process. */
  payload: z.object({ input: z.string().optional(), output: z.string().optional() }).optional(),
  tags: Tags.optional(),
});
export type TraceSampled = z.infer<typeof TraceSampled>;
