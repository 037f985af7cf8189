/**
 * The OTLP trace receiver behind `POST /v1/traces`: decoded spans become production traces (genai.ts) that go
 * through the same sampler, with the same PII redaction, as `passk sample`, then into `TraceSampled`. One
 * sampler for the server's life, so a policy's caps count across requests; an export is answered once what it
 * kept is durable in the log.
 */
import type { EventPublisher } from '../../processors/ports.ts';
import type { SamplingPolicyInput } from '../sampler/policy.ts';
import type { Redactor } from '../sampler/redact.ts';
import { createTraceSampler } from '../sampler/sampler.ts';
import { createRecorder } from '../sdk/recorder.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { decodeJson, decodeProtobuf } from './decode.ts';
import { createSpanAssembler } from './genai.ts';

export const OTLP_PRODUCER = `passk-otlp/${PRODUCER_VERSION}`;

export interface OtlpReceiverOptions {
  readonly publisher: EventPublisher;
  /** @default every trace kept: `{ name: 'otlp', rate: 1 }` */
  readonly policy?: SamplingPolicyInput;
  /** @default the sampler's (email, card, phone, …) */
  readonly redactors?: readonly Redactor[];
  readonly seed?: number;
  readonly onError?: (e: unknown) => void;
}

export interface OtlpExportResult {
  /** Spans accepted (kept or sampled out): roots and the children summarized into them, plus children held. */
  readonly accepted: number;
  readonly kept: number;
  readonly rejected: number;
  /** Why spans were rejected (the first few reasons). */
  readonly message: string;
}

export const createOtlpReceiver = (opts: OtlpReceiverOptions) => {
  const recorder = createRecorder({
    publisher: opts.publisher,
    producer: OTLP_PRODUCER,
    maxWaitMs: 5,
    ...(opts.onError ? { onError: opts.onError } : { onError: () => undefined }),
  });
  const sampler = createTraceSampler({
    policy: opts.policy ?? { name: 'otlp', rate: 1 },
    recorder,
    ...(opts.redactors ? { redactors: opts.redactors } : {}),
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
  });
  const assembler = createSpanAssembler();
  // Windows of a capped policy close on the clock; their reservoirs are written then.
  const ticker = setInterval(() => sampler.tick(), 1_000);
  ticker.unref();

  return {
    policyId: sampler.policyId,
    /** Decodes (throwing `MalformedOtlp`), samples, and resolves once every kept trace is durable. */
    async export(body: Uint8Array, format: 'protobuf' | 'json'): Promise<OtlpExportResult> {
      const request = format === 'protobuf' ? decodeProtobuf(body) : decodeJson(new TextDecoder().decode(body));
      let spans = 0;
      for (const rs of request.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
      const { candidates, rejected } = assembler.add(request);
      const reasons = rejected.map((r) => r.reason);
      let refused = rejected.reduce((n, r) => n + r.spans, 0);
      let kept = 0;
      for (const { candidate } of candidates) {
        try {
          const d = sampler.offer(candidate);
          if (d.kept === true) kept++;
        } catch (e) {
          // The recorder validates the trace (lengths, shapes) before it is buffered.
          refused++;
          reasons.push(`trace ${candidate.trace_id}: ${(e as Error).message}`);
        }
      }
      const refusedBefore = recorder.stats.refused;
      await recorder.flush();
      // The log refused these (over the largest event size): counted, not silently dropped.
      const tooLarge = recorder.stats.refused - refusedBefore;
      if (tooLarge > 0) {
        refused += tooLarge;
        kept -= tooLarge;
        reasons.push(`${tooLarge} traces over the event size limit (PASSK_MAX_EVENT_BYTES)`);
      }
      const shown = reasons.slice(0, 3).join('; ');
      return {
        accepted: spans - refused,
        kept,
        rejected: refused,
        message: reasons.length > 3 ? `${shown}; and ${reasons.length - 3} more` : shown,
      };
    },
    /** Closes the sampler's open windows and flushes. */
    async close(): Promise<void> {
      clearInterval(ticker);
      await sampler.flush();
      await recorder.close();
    },
  };
};
export type OtlpReceiver = ReturnType<typeof createOtlpReceiver>;
