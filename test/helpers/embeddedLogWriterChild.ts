/**
 * A writer in another process for test/integration/embeddedIndexBuild.int.test.ts:
 *   node --import tsx embeddedLogWriterChild.ts <dataDir> <busyTimeoutMs>
 * Opens the embedded log as the SDK, `passk import` or the ingest API do, publishes one TrialRecorded, and prints
 * `appended <event_id>` (exit 0), or `failed <SQLite code> <message>` (exit 1).
 */
import { createEmbeddedEventLog } from '../../log/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { trial } from './events.ts';

const [dataDir, busy] = process.argv.slice(2);
if (!dataDir || !busy) throw new Error('usage: embeddedLogWriterChild.ts <dataDir> <busyTimeoutMs>');

try {
  const log = createEmbeddedEventLog({ dataDir, busyTimeoutMs: Number(busy) });
  const event = trial({ seq: 1, event_id: deterministicEventId(1_700_000_000_000, 'writer-child', 1) });
  await log.publisher.publish([event]);
  await log.close();
  process.stdout.write(`appended ${event.event_id}\n`);
} catch (e) {
  process.stdout.write(`failed ${String((e as { code?: unknown }).code)} ${(e as Error).message}\n`);
  process.exitCode = 1;
}
