import type { EventPublisher, EventSource } from '../../processors/ports.ts';
import { DEFAULT_REDACTORS, redactText } from '../redaction/redact.ts';
import type { Redactor } from '../redaction/text.ts';
import { validateEvent } from '../../schemas/codec.ts';
import { InputError } from '../../schemas/errors.ts';
import type { FailureConfirmed, TraceSampled } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { existingEventIds, readLog } from '../logReader.ts';
import { failureSignals } from '../../processors/core/failureSignals.ts';
import { PRODUCER_VERSION } from '../version.ts';

/** A sampled production trace that looks like a failure, waiting for a reviewer. */
export interface ProductionFailure {
  readonly trace: TraceSampled;
  /** Why it is listed: failed graders (`grader:<id>`), `error:<kind>`, `negative_feedback`. */
  readonly why: readonly string[];
}

/**
 * Sampled production traces with a failing online verdict, an error or negative feedback, newest first,
 * leaving out those a reviewer already confirmed (a FailureConfirmed with the same trace id). Read from the
 * event log, so it works on both backends and while another process holds the embedded store.
 */
export const listProductionFailures = async (
  source: EventSource,
  opts: {
    agentVersion?: string;
    segment?: string;
    limit?: number;
    userId?: string;
    sessionId?: string;
    /** The requested or the answering model. */
    model?: string;
    minLatencyMs?: number;
  } = {},
): Promise<ProductionFailure[]> => {
  const traces = new Map<string, TraceSampled>();
  const confirmed = new Set<string>();
  await readLog(source, { topics: [TOPICS.traces, TOPICS.datasets] }, ({ event: e }) => {
    if (e.type === 'FailureConfirmed') confirmed.add(e.trace_id);
    else if (e.type === 'TraceSampled') {
      // The latest record of a trace: its highest revision, then the latest.
      const prior = traces.get(e.trace_id);
      const rank = (t: TraceSampled) => [t.revision ?? 0, t.occurred_at] as const;
      if (
        !prior ||
        rank(prior)[0] < rank(e)[0] ||
        (rank(prior)[0] === rank(e)[0] && prior.occurred_at <= e.occurred_at)
      )
        traces.set(e.trace_id, e);
    }
  });
  return [...traces.values()]
    .filter((t) => !confirmed.has(t.trace_id))
    .filter(
      (t) =>
        (opts.agentVersion === undefined || t.agent_version === opts.agentVersion) &&
        (opts.segment === undefined || t.segment === opts.segment) &&
        (opts.userId === undefined || t.user_id === opts.userId) &&
        (opts.sessionId === undefined || t.session_id === opts.sessionId) &&
        (opts.model === undefined || t.model === opts.model || t.response_model === opts.model) &&
        (opts.minLatencyMs === undefined || (t.latency_ms ?? -1) >= opts.minLatencyMs),
    )
    .map((trace) => ({ trace, why: failureSignals(trace) }))
    .filter((f) => f.why.length > 0)
    .sort((a, b) => b.trace.occurred_at - a.trace.occurred_at || a.trace.trace_id.localeCompare(b.trace.trace_id))
    .slice(0, opts.limit ?? Infinity);
};

export interface Confirmation {
  readonly trace: TraceSampled;
  readonly datasetId: string;
  /** What the agent should have answered. */
  readonly expected: string;
  readonly reviewer: string;
  readonly note?: string;
  /** The request as the dataset row's input. @default the trace's (redacted) recorded input */
  readonly input?: string;
  readonly at: number;
  /** Run over what the reviewer typed (input, expected, note): it may quote the trace. @default DEFAULT_REDACTORS */
  readonly redactors?: readonly Redactor[];
}

/**
 * A reviewer's confirmation as a FailureConfirmed event. Its id is derived from (trace, dataset), so confirming
 * the same trace twice counts once; the processors turn it into a must-not-break row linked to the trace.
 */
export const failureConfirmed = (c: Confirmation): FailureConfirmed => {
  const redact = (s: string) => redactText(s, c.redactors ?? DEFAULT_REDACTORS);
  const input = c.input === undefined ? c.trace.payload?.input : redact(c.input);
  if (input === undefined)
    throw new InputError(`trace ${c.trace.trace_id} has no recorded input: give the input explicitly`, {
      field: 'input',
    });
  if (c.expected.trim() === '') throw new InputError('the expected result is empty', { field: 'expected' });
  return validateEvent({
    event_id: deterministicEventId(c.trace.occurred_at, 'FailureConfirmed', c.trace.trace_id, c.datasetId),
    type: 'FailureConfirmed',
    schema_version: 1,
    occurred_at: c.at,
    producer: `passk-review/${PRODUCER_VERSION}`,
    trace_id: c.trace.trace_id,
    dataset_id: c.datasetId,
    input,
    expected: redact(c.expected),
    reviewer: c.reviewer,
    ...(c.note ? { note: redact(c.note) } : {}),
  }) as FailureConfirmed;
};

/** Trace ids a reviewer confirmed, from passk.datasets (a small topic): the store may not have them yet. */
export const confirmedTraceIds = async (source: EventSource): Promise<Set<string>> => {
  const ids = new Set<string>();
  await readLog(
    source,
    { topics: [TOPICS.datasets] },
    ({ event: e }) => e.type === 'FailureConfirmed' && ids.add(e.trace_id),
  );
  return ids;
};

/** Finds one sampled trace by id in the log. */
export const findTrace = async (source: EventSource, traceId: string): Promise<TraceSampled | undefined> => {
  let found: TraceSampled | undefined;
  await readLog(source, { topics: [TOPICS.traces] }, ({ event: e }) => {
    if (e.type === 'TraceSampled' && e.trace_id === traceId && (!found || found.occurred_at <= e.occurred_at))
      found = e;
  });
  return found;
};

/** What a reviewer gives to confirm a trace, from `passk review --confirm` or the dashboard's confirm action. */
export type ConfirmRequest = Omit<Confirmation, 'trace' | 'at'> & { readonly traceId: string; readonly at?: number };

/**
 * Finds the trace in the log, builds its FailureConfirmed and publishes it unless the log has it already (the same
 * trace confirmed for the same dataset has the same event id). Both the CLI and the dashboard confirm through here.
 * `vet` sees the trace before anything is published, and may refuse it by throwing (the CLI's agent version check).
 */
export const confirmFailure = async (
  log: EventSource & { readonly publisher: EventPublisher },
  c: ConfirmRequest,
  vet?: (trace: TraceSampled) => Promise<void> | void,
): Promise<{ event: FailureConfirmed; published: boolean; trace: TraceSampled }> => {
  const trace = await findTrace(log, c.traceId);
  if (!trace) throw new InputError(`no sampled trace with id ${c.traceId}`, { field: 'trace_id' });
  await vet?.(trace);
  const { traceId, at, ...rest } = c;
  void traceId;
  const event = failureConfirmed({ ...rest, trace, at: at ?? Date.now() });
  const known = await existingEventIds(log, [TOPICS.datasets]);
  if (known.has(event.event_id)) return { event, published: false, trace };
  await log.publisher.publish([event]);
  return { event, published: true, trace };
};
