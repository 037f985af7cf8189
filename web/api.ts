import { z } from 'zod';
import type { DashboardData } from './data.ts';
import { RowQuery, rowPage } from './rowPage.ts';

/** The JSON API: one GET route per view; parameters are validated, then passed to the data port. */
const Scope = z.object({ suite: z.string().min(1), dataset_version: z.string().min(1) });

export class BadRequest extends Error {
  override name = 'BadRequest';
}

const parse = <T>(schema: z.ZodType<T>, params: URLSearchParams): T => {
  const r = schema.safeParse(Object.fromEntries(params));
  if (!r.success)
    throw new BadRequest(r.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; '));
  return r.data;
};

type Route = (data: DashboardData, params: URLSearchParams) => Promise<unknown>;

export const ROUTES: Record<string, Route> = {
  '/api/groups': (d) => d.groups(),
  '/api/overview': (d, p) => d.overview(parse(Scope, p)),
  '/api/compare': (d, p) =>
    d.compare(
      parse(
        Scope.extend({ baseline: z.string().min(1), candidate: z.string().min(1) }).refine(
          (q) => q.baseline !== q.candidate,
          {
            path: ['candidate'],
            message: 'the same version as the baseline: a version compared with itself has no change to show',
          },
        ),
        p,
      ),
    ),
  '/api/row': (d, p) => {
    const q = parse(Scope.extend({ row_id: z.string().min(1), versions: z.string().min(1) }), p);
    return d.row({ ...q, versions: q.versions.split(',').filter(Boolean) });
  },
  // one page of the explorer, filtered and sorted here: the whole view is built once per store watermark (shared)
  '/api/rows': async (d, p) => {
    const q = parse(Scope.extend(RowQuery.shape), p);
    return rowPage(await d.rows({ suite: q.suite, dataset_version: q.dataset_version }), q);
  },
  '/api/gates': (d, p) => d.gates(parse(z.object({ suite: z.string().min(1).optional() }), p)),
  '/api/production': (d) => d.production(),
  '/api/trace': (d, p) => d.trace(parse(z.object({ trace_id: z.string().min(1) }), p)),
  '/api/traces': (d, p) => {
    const q = parse(
      z.object({
        failed: z.enum(['true', 'false']).optional(),
        agent_version: z.string().min(1).optional(),
        segment: z.string().min(1).optional(),
        from: z.coerce.number().int().nonnegative().optional(),
        to: z.coerce.number().int().positive().optional(),
        limit: z.coerce.number().int().min(1).max(1000).optional(),
        user_id: z.string().min(1).optional(),
        session_id: z.string().min(1).optional(),
        model: z.string().min(1).optional(),
        min_latency_ms: z.coerce.number().nonnegative().optional(),
      }),
      p,
    );
    return d.traces({ ...q, failed: q.failed === 'true' });
  },
  '/api/judges': (d) => d.judges(),
  '/api/datasets': (d) => d.datasets(),
  '/api/dead-letters': (d) => d.deadLetters(),
};

/** The body of `POST /api/review/confirm`: the same fields as `passk review --confirm`. */
export const ConfirmBody = z.object({
  trace_id: z.string().min(1),
  dataset_id: z.string().min(1),
  expected: z.string().trim().min(1),
  reviewer: z.string().trim().min(1),
  note: z.string().optional(),
});
export type ConfirmBody = z.infer<typeof ConfirmBody>;
