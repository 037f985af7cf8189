import { randomUUID } from 'node:crypto';
import type { TraceCandidate, TraceSampler } from './sampler.ts';

export interface TraceSamplingOptions<I, O> {
  readonly sampler: Pick<TraceSampler, 'offer'>;
  readonly agentVersion: string;
  /** The segment of a request (a customer tier, a locale, a route). @default 'default' */
  readonly segmentOf?: (input: I) => string;
  /** @default a random UUID per call */
  readonly traceIdOf?: (input: I) => string;
  readonly tagsOf?: (input: I) => string[];
  /** Online graders: verdicts on this request, recorded with the trace. */
  readonly grade?: (input: I, output: O) => TraceCandidate['verdicts'];
  readonly clock?: () => number;
}

/**
 * Wraps an agent function so every call is offered to the sampler when it finishes: an error is recorded
 * with its kind (and always kept by default), then rethrown; the result is returned unchanged. Redaction
 * and sampling happen inside the sampler, before anything leaves the process.
 */
export const withTraceSampling =
  <I, O>(fn: (input: I) => Promise<O>, opts: TraceSamplingOptions<I, O>) =>
  async (input: I): Promise<O> => {
    const clock = opts.clock ?? Date.now;
    const base = {
      trace_id: opts.traceIdOf?.(input) ?? randomUUID(),
      agent_version: opts.agentVersion,
      segment: opts.segmentOf?.(input) ?? 'default',
      input,
      ...(opts.tagsOf ? { tags: opts.tagsOf(input) } : {}),
    };
    let output: O;
    try {
      output = await fn(input);
    } catch (e) {
      const kind =
        typeof (e as { kind?: unknown })?.kind === 'string'
          ? (e as { kind: string }).kind
          : ((e as Error)?.name ?? 'error');
      opts.sampler.offer({ ...base, error_kind: kind, occurred_at: clock() });
      throw e;
    }
    const verdicts = opts.grade?.(input, output);
    opts.sampler.offer({ ...base, output, ...(verdicts ? { verdicts } : {}), occurred_at: clock() });
    return output;
  };
