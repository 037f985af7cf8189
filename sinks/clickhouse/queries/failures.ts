import { z } from 'zod';
import { any, select, type Querier } from './select.ts';
import { NOT_RETRACTED } from './retracted.ts';

const Row = z.object({
  bucket_start: z.number(),
  agent_version: z.string(),
  failure_category: z.string(),
  trials: z.number(),
  rows: z.number(),
});
export type FailureCategoryBucket = z.infer<typeof Row>;

/**
 * Failed trials per failure category per time bucket (by event time). Trials that failed without
 * a category count as 'uncategorized'; ungraded trials (passed NULL) appear only under
 * 'test_environment' when so categorized, since they are not the agent's failures.
 */
export const failureCategories = async (
  client: Querier,
  opts: { suite: string; bucketMs: number; agent_version?: string; from?: number; to?: number },
): Promise<FailureCategoryBucket[]> =>
  select(
    client,
    Row,
    `SELECT toUnixTimestamp64Milli(toStartOfInterval(occurred_at, toIntervalMillisecond({bucket_ms:UInt64}))) AS bucket_start,
            agent_version, ifNull(failure_category, 'uncategorized') AS failure_category,
            count() AS trials, uniqExact(dataset_version, row_id) AS rows
     FROM trials FINAL
     WHERE suite = {suite:String}
       AND ({agent_version:String} = '' OR agent_version = {agent_version:String})
       AND occurred_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND occurred_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
       AND (passed = false OR failure_category = 'test_environment')
       AND ${NOT_RETRACTED}
     GROUP BY bucket_start, agent_version, failure_category
     ORDER BY bucket_start, agent_version, failure_category`,
    {
      suite: opts.suite,
      bucket_ms: opts.bucketMs,
      agent_version: any(opts.agent_version),
      from: opts.from ?? 0,
      to: opts.to ?? Number.MAX_SAFE_INTEGER,
    },
  );
