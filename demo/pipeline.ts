import type { EventLog } from '../processors/ports.ts';
import type { Querier } from '../sinks/clickhouse/queries/select.ts';

/**
 * What the demo needs from a running passk: the event log to publish to (and to declare its gates on and follow the
 * processors' decisions), the store to read from, and a way to wait until the processors have made everything
 * published so far durable in the store. `cli/commands/demo.ts` wires it from the configuration: the embedded log
 * and chDB by default, or Kafka and a ClickHouse server.
 */
export interface DemoPipeline {
  readonly log: EventLog;
  readonly store: Querier;
  /** Resolves once every event published so far has been processed and its results are queryable. */
  settle(): Promise<void>;
}

export type DemoStage =
  'dataset' | 'baseline' | 'candidate' | 'confirmation' | 'production' | 'review' | 'next-gate' | 'judges';

export interface DemoProgress {
  readonly stage: DemoStage;
  readonly label: string;
  readonly done: number;
  readonly total: number;
}
