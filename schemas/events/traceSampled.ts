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
  /**
   * 0 for the first record of a trace; a later record of the same trace (spans or GenAI log events that arrived after
   * it was recorded) carries the next revision, a new event id and the whole trace again. Readers keep the highest.
   */
  revision: z.number().int().nonnegative().optional(),
  /** The end user (OTel `user.id`, OpenInference `user.id`, …), redacted like any text. */
  user_id: z.string().min(1).max(512).optional(),
  /** The session or conversation, redacted like any text. */
  session_id: z.string().min(1).max(512).optional(),
  /** The request's duration: its root span's end minus its start, ms. */
  latency_ms: z.number().nonnegative().optional(),
  /** The model the request asked for, and the one that answered (`gpt-4o` → `gpt-4o-2024-08-06`). */
  model: z.string().min(1).max(512).optional(),
  response_model: z.string().min(1).max(512).optional(),
  /** What the request cost, when its instrumentation reports it. */
  cost_usd: z.number().nonnegative().optional(),
});
export type TraceSampled = z.infer<typeof TraceSampled>;
