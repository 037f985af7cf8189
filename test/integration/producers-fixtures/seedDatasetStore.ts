// Stands in for the processors' step that is not built yet: every FailureConfirmed in the log becomes a
// must-not-break DatasetRowUpserted in a new dataset version (v2), linked to its trace; v1 holds two manual rows.
// Writes them to the embedded store with the sink's own writer.  node --import tsx seedDatasetStore.ts <dataDir>
import { loadConfig } from '../../../deploy/config.ts';
import { openStore } from '../../../deploy/store.ts';
import { createEmbeddedEventLog } from '../../../log/embedded/embeddedLog.ts';
import { readLog } from '../../../producers/logReader.ts';
import type { DatasetRowUpserted, FailureConfirmed } from '../../../schemas/events/index.ts';
import { deterministicEventId } from '../../../schemas/ids.ts';
import { TOPICS } from '../../../schemas/topics.ts';
import { createClickHouseRowSink } from '../../../sinks/clickhouse/index.ts';

const dataDir = process.argv[2]!;
const log = createEmbeddedEventLog({ dataDir });
const confirmed: FailureConfirmed[] = [];
await readLog(log, { topics: [TOPICS.datasets] }, (e) => e.event.type === 'FailureConfirmed' && confirmed.push(e.event));
await log.close();

const T0 = Date.UTC(2026, 0, 1);
const row = (at: number, version: string, row_id: string, input: string, expected: string, tags: string[], provenance: DatasetRowUpserted['provenance']): DatasetRowUpserted => ({
  event_id: deterministicEventId(at, 'seed', version, row_id),
  type: 'DatasetRowUpserted',
  schema_version: 1,
  occurred_at: at,
  producer: 'test-seed',
  dataset_id: 'refunds',
  dataset_version: version,
  row_id,
  input,
  expected,
  tags,
  provenance,
});
const events = [
  row(T0, 'v1', 'r01', 'wrong size, unworn', 'approve', [], { kind: 'manual' }),
  row(T0 + 1, 'v1', 'r03', 'found it cheaper', 'deny', ['must_not_break'], { kind: 'manual' }),
  ...confirmed.map((f, i) =>
    row(T0 + 86_400_000 + i, 'v2', `prod-${f.trace_id}`, f.input, f.expected, ['must_not_break'], { kind: 'production_failure', trace_id: f.trace_id, failure_event_id: f.event_id, ...(f.note ? { note: f.note } : {}) }),
  ),
];
const store = await openStore(loadConfig({ dataDir }, {}));
const sink = createClickHouseRowSink({ client: store.client, retry: { retries: 0, initialMs: 0, factor: 1, maxMs: 0 } });
await sink.writeEvents(events);
await sink.close();
await store.close();
