import type { PasskEvent } from '../../schemas/events/index.ts';
import type { WindowTotal } from '../folds/windowTotals.ts';
import type { EventPublisher, EventSource } from '../ports.ts';

/** Options every topology shares. */
export interface TopologyOptions {
  readonly groupId?: string;
  /** Unique per process: names the groups that read changelogs on restore. */
  readonly instanceId: string;
  /** `producer` of the events this topology emits; part of their bytes, so keep it stable. */
  readonly producer: string;
  /** Resolve to stop: pulling stops, what is in flight becomes durable and is committed, the stream completes. */
  readonly stop?: Promise<unknown>;
  readonly maxBatch?: number;
  readonly maxInFlight?: number;
  readonly onIdleProbe?: (probe: () => Promise<boolean>) => void;
  readonly isCommitRejected?: (e: unknown) => boolean;
}

/** What the datasets, gates and windows topologies write to the store, idempotently. */
export interface EventSink {
  writeEvents(events: readonly PasskEvent[]): Promise<void>;
  /** Production window totals; the store keeps the highest seq per window. */
  writeWindows(windows: readonly WindowTotal[]): Promise<void>;
}

export interface EventPorts {
  readonly source: EventSource;
  readonly publisher: EventPublisher;
  readonly sink: EventSink;
}

/** Emitted after each commit of the datasets, gates or windows topology. */
export interface DecisionProgress {
  readonly committed: boolean;
  readonly emitted: readonly PasskEvent[];
}
