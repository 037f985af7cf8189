/**
 * The OTLP receiver behind `POST /v1/traces` and `POST /v1/logs`: decoded spans, and the GenAI log records joined to
 * them, become production traces (genai.ts) that go through the same sampler, with the same PII redaction, as
 * `passk sample`, then into `TraceSampled`. One sampler for the server's life, so a policy's caps count across
 * requests; an export is answered once what it kept is durable in the log (and, under a cap, once its candidates
 * are durable in the spool).
 */
import { pushAll } from '../../processors/core/arrays.ts';
import type { DeadLetter, EventPublisher } from '../../processors/ports.ts';
import type { SamplingPolicyInput } from '../sampler/policy.ts';
import type { Redactor } from '../sampler/redact.ts';
import { createTraceSampler } from '../sampler/sampler.ts';
import type { TraceSpool } from '../sampler/spool.ts';
import { createRecorder } from '../sdk/recorder.ts';
import { safeText } from '../../processors/core/safeText.ts';
import { EventTooLarge, InvalidEvent } from '../../schemas/errors.ts';
import { clipText, redactText } from '../redaction/redact.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { decodeJson, decodeLogsJson, decodeLogsProtobuf, decodeProtobuf, type Signal } from './decode.ts';
import { ingestLetters } from './deadLetters.ts';
import { createSpanAssembler, type AssemblerOptions, type Assembled, type Refused, refusedOf } from './genai.ts';

export const OTLP_PRODUCER = `passk-otlp/${PRODUCER_VERSION}`;
/** Characters of a refusal's message logged or answered (a span name can be anything a client sends). */
const SHOWN_MAX_CHARS = 2_000;

/** Why spans or log records were refused, as counted (`passk_otlp_rejected_total{reason}`). */
export type RejectReason = 'no_convention' | 'late' | 'invalid' | 'too_large' | 'no_trace_id' | 'evicted';

export interface OtlpReceiverOptions {
  readonly publisher: EventPublisher;
  /** @default every trace kept: `{ name: 'otlp', rate: 1 }` */
  readonly policy?: SamplingPolicyInput;
  /** @default the sampler's (email, card, phone, …) */
  readonly redactors?: readonly Redactor[];
  readonly seed?: number;
  /** Held spans' byte bound, the wait for a root, the late window (genai.ts). */
  readonly assembly?: AssemblerOptions;
  /** Where a capped policy's reservoirs are made durable before an export is answered. */
  readonly spool?: TraceSpool;
  readonly clock?: () => number;
  readonly onError?: (e: unknown) => void;
  /** Every refusal and eviction, once, with its reason (the server logs and counts them). */
  readonly onReject?: (r: { reason: RejectReason; spans: number; message: string }) => void;
}

export interface OtlpExportResult {
  /** Spans (or log records) accepted: kept, sampled out, held, or joined. */
  readonly accepted: number;
  readonly kept: number;
  readonly rejected: number;
  /** Why items were rejected (the first few reasons). */
  readonly message: string;
}

export interface ReceiverStats {
  spans: number;
  logRecords: number;
  traces: number;
  revisions: number;
  duplicates: number;
  kept: number;
  rejected: Record<RejectReason, number>;
  /** Time spent in the sampler (drawing, redacting, clipping), ms. */
  prepareMs: number;
  /** Dead letters appended to the log (each refused or evicted span or log record, once). */
  deadLetters: number;
}

const reasonOf = (message: string): RejectReason =>
  /no trace id|names no trace/.test(message) ? 'no_trace_id' : /late window/.test(message) ? 'late' : 'no_convention';

export const createOtlpReceiver = (opts: OtlpReceiverOptions) => {
  const clock = opts.clock ?? Date.now;
  const stats: ReceiverStats = {
    spans: 0,
    logRecords: 0,
    traces: 0,
    revisions: 0,
    duplicates: 0,
    kept: 0,
    rejected: { no_convention: 0, late: 0, invalid: 0, too_large: 0, no_trace_id: 0, evicted: 0 },
    prepareMs: 0,
    deadLetters: 0,
  };
  /**
   * A refusal's message as it is logged and answered: it quotes what the client sent (a span's name), so it is
   * clipped, redacted like a stored trace and made safe for a terminal (control characters escaped).
   */
  const shown = (message: string): string =>
    safeText(redactText(clipText(message, SHOWN_MAX_CHARS), sampler.redactors));
  /** Letters made and not yet in the log: appended before the next answer (or by the ticker). */
  const letters: DeadLetter[] = [];
  const reject = (reason: RejectReason, spans: number, message: string, refused: readonly Refused[] = []) => {
    stats.rejected[reason] += spans;
    opts.onReject?.({ reason, spans, message: shown(message) });
    if (refused.length > 0) pushAll(letters, ingestLetters(refused, reason, message, sampler.redactors));
  };
  /** Appends the letters made so far, each once; a failure puts them back for the next try. */
  const deadLetter = async (): Promise<void> => {
    if (letters.length === 0) return;
    const batch = letters.splice(0);
    try {
      stats.deadLetters += await opts.publisher.publishDeadLetters(batch);
    } catch (e) {
      // back in front of any made meanwhile, for the next try
      const later = letters.splice(0);
      pushAll(letters, batch);
      pushAll(letters, later);
      throw e;
    }
  };
  const recorder = createRecorder({
    publisher: opts.publisher,
    producer: OTLP_PRODUCER,
    maxWaitMs: 5,
    ...(opts.onError ? { onError: opts.onError } : { onError: () => undefined }),
  });
  /** Traces the log refused (over its event size, or invalid there), noted as their receipts fail. */
  const refusedByLog: { traceId: string; error: EventTooLarge | InvalidEvent }[] = [];
  const sampler = createTraceSampler({
    policy: opts.policy ?? { name: 'otlp', rate: 1 },
    recorder: {
      recordTrace: (trace) => {
        const receipt = recorder.recordTrace(trace);
        receipt.catch((e: unknown) => {
          if (e instanceof EventTooLarge || e instanceof InvalidEvent)
            refusedByLog.push({ traceId: trace.trace_id, error: e });
        });
        return receipt;
      },
      flush: () => recorder.flush(),
    },
    clock,
    ...(opts.redactors ? { redactors: opts.redactors } : {}),
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    ...(opts.spool ? { spool: opts.spool } : {}),
  });
  const assembler = createSpanAssembler({
    ...opts.assembly,
    onEvict: (traceId, spans, why, refused) => {
      reject('evicted', spans, `trace ${traceId}: ${spans} spans evicted: ${why}`, refused);
      opts.assembly?.onEvict?.(traceId, spans, why, refused);
    },
  });

  /** Offers new traces to the sampler; a later revision follows its trace's decision. */
  const settle = (a: Assembled, reasons: string[]): { kept: number; refused: number } => {
    let kept = 0;
    let refused = 0;
    for (const r of a.rejected) {
      refused += r.spans;
      reasons.push(r.reason);
      reject(reasonOf(r.reason), r.spans, r.reason, r.refused);
    }
    stats.duplicates += a.duplicates;
    const started = performance.now();
    for (const { candidate, revision, recorded } of a.candidates) {
      const c = { ...candidate, revision };
      try {
        if (revision === 0) {
          stats.traces++;
          const d = sampler.offer(c);
          recorded.decision = d.kept === true ? d.probability : d.kept === 'pending' ? 'pending' : 'out';
          if (d.kept === true) kept++;
        } else {
          stats.revisions++;
          const d = recorded.decision;
          if (typeof d === 'number') sampler.record(c, d);
          else if (d === 'pending') sampler.revise(c);
        }
      } catch (e) {
        // The recorder validates the trace (lengths, shapes) before it is buffered.
        const message = `trace ${candidate.trace_id}: ${(e as Error).message}`;
        refused++;
        reasons.push(message);
        reject('invalid', 1, message, refusedOf([recorded.root, ...recorded.children]));
      }
    }
    stats.prepareMs += performance.now() - started;
    return { kept, refused };
  };

  /**
   * Makes what was kept durable. A trace the log refused (over the largest event size, or invalid there) is counted,
   * logged and dead-lettered once, with its spans when they are still held (the late window), never dropped silently;
   * its letters are appended before the answer. Returns how many traces the log refused.
   */
  const durable = async (reasons: string[]): Promise<number> => {
    await sampler.persist();
    await recorder.flush();
    const refused = refusedByLog.splice(0);
    for (const { traceId, error } of refused) {
      const tooLarge = error instanceof EventTooLarge;
      const message = tooLarge
        ? `trace ${traceId} over the event size limit (PASSK_MAX_EVENT_BYTES): ${error.message}`
        : `trace ${traceId} refused by the log: ${error.message}`;
      reasons.push(message);
      // spans no longer held (a capped window closed after the late window): a letter naming the trace
      const spans = assembler.spansOf(traceId) ?? [{ span: { traceId, spanId: '', name: '(spans no longer held)' } }];
      reject(tooLarge ? 'too_large' : 'invalid', 1, message, spans);
    }
    await deadLetter();
    return refused.length;
  };

  const answer = (items: number, kept: number, refused: number, reasons: string[]): OtlpExportResult => {
    const first = shown(reasons.slice(0, 3).join('; '));
    stats.kept += kept;
    return {
      accepted: items - Math.min(items, refused),
      kept,
      rejected: Math.min(items, refused),
      message: reasons.length > 3 ? `${first}; and ${reasons.length - 3} more` : first,
    };
  };

  // Windows of a capped policy close on the clock; roots that never came, and late windows, too.
  let ticking: Promise<void> = Promise.resolve();
  const ticker = setInterval(() => {
    ticking = ticking
      .then(async () => {
        settle(assembler.tick(clock()), []);
        sampler.tick();
        await durable([]);
      })
      .catch((e: unknown) => opts.onError?.(e));
  }, 1_000);
  ticker.unref();

  const decode = (signal: Signal, body: Uint8Array, format: 'protobuf' | 'json') =>
    signal === 'traces'
      ? format === 'protobuf'
        ? decodeProtobuf(body)
        : decodeJson(new TextDecoder().decode(body))
      : format === 'protobuf'
        ? decodeLogsProtobuf(body)
        : decodeLogsJson(new TextDecoder().decode(body));

  return {
    policyId: sampler.policyId,
    stats,
    assembly: assembler.stats,
    /** Decodes (throwing `MalformedOtlp`), samples, and resolves once every kept trace is durable. */
    async export(body: Uint8Array, format: 'protobuf' | 'json', signal: Signal = 'traces'): Promise<OtlpExportResult> {
      const reasons: string[] = [];
      if (signal === 'logs') {
        const request = decode('logs', body, format) as ReturnType<typeof decodeLogsJson>;
        let records = 0;
        for (const rl of request.resourceLogs ?? [])
          for (const sl of rl.scopeLogs ?? []) records += sl.logRecords?.length ?? 0;
        stats.logRecords += records;
        const { kept, refused } = settle(assembler.addLogs(request, clock()), reasons);
        return answer(records, kept, refused + (await durable(reasons)), reasons);
      }
      const request = decode('traces', body, format) as ReturnType<typeof decodeJson>;
      let spans = 0;
      for (const rs of request.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
      stats.spans += spans;
      const { kept, refused } = settle(assembler.add(request, clock()), reasons);
      const tooLarge = await durable(reasons);
      return answer(spans, kept - tooLarge, refused + tooLarge, reasons);
    },
    /**
     * Stops: with a spool, open windows stay there for the next start; without one, they are closed now and their
     * reservoirs flushed.
     */
    async close(): Promise<void> {
      clearInterval(ticker);
      await ticking;
      if (opts.spool) await sampler.persist();
      else await sampler.flush();
      await recorder.close();
    },
  };
};
export type OtlpReceiver = ReturnType<typeof createOtlpReceiver>;
