import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The seed of everything the demo simulates. */
export const DEMO_SEED = 20261124;
export const DEMO_DATASET_ID = 'refund-review';

/**
 * One labeled row of the refund-review dataset: the request, the expected decision and the expected checks.
 * The same shape as `passk run --dataset` rows (producers/runner/dataset.ts), so the file runs as it is.
 */
export const DemoRow = z.object({
  row_id: z.string().min(1),
  /** The refund request as JSON text (`RefundRequest`): what the agent reads. */
  input: z.string(),
  expected: z.enum(['approve', 'deny']),
  /** The correct answer of each intermediate check, by name, in the order the agent makes them. */
  expected_checks: z.record(z.string(), z.boolean()),
  /** Tagged before any result is seen: `must_not_break`, `high_value`. */
  tags: z.array(z.string()),
});
export type DemoRow = z.infer<typeof DemoRow>;

export const DATASET_FILE = fileURLToPath(new URL('./refund-review.jsonl', import.meta.url));

export const loadDemoDataset = (file: string = DATASET_FILE): DemoRow[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      const parsed = DemoRow.safeParse(JSON.parse(l));
      if (!parsed.success)
        throw new Error(`${file}: line ${i + 1}: ${parsed.error.issues[0]?.message ?? 'invalid row'}`);
      return parsed.data;
    });
