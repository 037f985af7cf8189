import { openEventLog } from '../../deploy/eventLog.ts';
import type { PasskConfig } from '../../deploy/config.ts';
import type { EventLog } from '../../processors/ports.ts';
import { readAdaptiveRounds } from '../../producers/adaptiveRounds.ts';
import type { Querier } from '../../sinks/clickhouse/queries/select.ts';
import { storeWatermark } from '../../web/queries.ts';
import { clickhouseDashboardData, keptRounds } from '../../web/clickhouseData.ts';

/**
 * The dashboard's data from the store, with the adaptive runs' first stages from their rounds on the event log (the
 * open `log`, else the configured one opened for the read), as `passk compare --from-store` takes them.
 */
export const dashboardDataWithRounds = (client: Querier, config: PasskConfig, log?: EventLog) => {
  const watermark = () => storeWatermark(client);
  const read = async () => {
    if (log) return readAdaptiveRounds(log);
    const opened = await openEventLog(config);
    try {
      return await readAdaptiveRounds(opened);
    } finally {
      await opened.close();
    }
  };
  return clickhouseDashboardData(client, watermark, undefined, undefined, undefined, keptRounds(watermark, read));
};
