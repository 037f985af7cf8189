import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { readLog } from '../../producers/logReader.ts';
import { TOPICS } from '../../schemas/topics.ts';

/** The TrialRecorded records on an embedded log's trials topic, and how many distinct event ids they carry. */
export const trialsOnLog = async (dataDir: string): Promise<{ records: number; ids: number }> => {
  const log = createEmbeddedEventLog({ dataDir });
  try {
    const ids = new Set<string>();
    let records = 0;
    await readLog(log, { topics: [TOPICS.trials] }, ({ event }) => {
      if (event.type !== 'TrialRecorded') return;
      records++;
      ids.add(event.event_id);
    });
    return { records, ids: ids.size };
  } finally {
    await log.close();
  }
};
