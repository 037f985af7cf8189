import { z } from 'zod';
import type { SuggestedCommands } from './commands.ts';
import type { BoundedComparison } from './compareAnswer.ts';
import type { JudgeCalibration } from '../processors/core/judges.ts';
import type { GroupReport } from '../processors/core/report.ts';
import type {
  DatasetVersionView,
  DeadLetterSummary,
  GateView,
  ProductionView,
  RowDrillDown,
  TraceList,
  TraceView,
  VersionGroup,
} from './data.ts';
import { RowQuery, type RowPage } from './rowPage.ts';

/**
 * The dashboard's JSON API as one contract, shared by the server (api.ts implements every route against it, server.ts
 * answers the confirm route with it) and the views (web/client/api.js types its calls with it through JSDoc, so
 * `npm run typecheck` checks every view's use of an answer). Each GET route: the query it accepts on the wire (a zod
 * schema: the server parses with it, the views pass its input type) and the JSON it answers.
 */
const Scope = z.object({ suite: z.string().min(1), dataset_version: z.string().min(1) });
const optional = z.string().min(1).optional();

export const QUERIES = {
  '/api/groups': z.object({}),
  '/api/overview': Scope,
  '/api/compare': Scope.extend({ baseline: z.string().min(1), candidate: z.string().min(1) }).refine(
    (q) => q.baseline !== q.candidate,
    {
      path: ['candidate'],
      message: 'the same version as the baseline: a version compared with itself has no change to show',
    },
  ),
  /** `versions`: comma-separated agent versions, the first two aligned. */
  '/api/row': Scope.extend({ row_id: z.string().min(1), versions: z.string().min(1) }),
  '/api/rows': Scope.extend(RowQuery.shape),
  '/api/gates': z.object({ suite: optional }),
  '/api/production': z.object({}),
  '/api/trace': z.object({ trace_id: z.string().min(1) }),
  '/api/traces': z.object({
    failed: z.enum(['true', 'false']).optional(),
    agent_version: optional,
    segment: optional,
    from: z.coerce.number().int().nonnegative().optional(),
    to: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    offset: z.coerce.number().int().nonnegative().optional(),
    user_id: optional,
    session_id: optional,
    model: optional,
    min_latency_ms: z.coerce.number().nonnegative().optional(),
  }),
  '/api/judges': z.object({}),
  '/api/datasets': z.object({}),
  '/api/dead-letters': z.object({}),
  '/api/commands': z.object({}),
} as const;

/** What each GET route answers (JSON). */
export interface Answers {
  '/api/groups': VersionGroup[];
  '/api/overview': GroupReport[];
  /** The comparison, plus the ids of the must-not-break rows in it; null when a side has no trials. */
  /** Every list cut to its first rows, with each list's length in `lists` (compareAnswer.ts). */
  /** `confirm_commands`: per version, its confirmation run on suspects.txt as the CLI prints it (commands.ts). */
  '/api/compare': (BoundedComparison & { confirm_commands: Record<string, string> }) | null;
  '/api/row': RowDrillDown | null;
  '/api/rows': RowPage;
  /** Gate decisions, newest first. */
  '/api/gates': GateView[];
  '/api/production': ProductionView;
  '/api/trace': TraceView | null;
  '/api/traces': TraceList;
  '/api/judges': JudgeCalibration[];
  '/api/datasets': DatasetVersionView[];
  '/api/dead-letters': DeadLetterSummary;
  /** The commands the views suggest, made by the CLI's formatter (commands.ts). */
  '/api/commands': SuggestedCommands;
}

export type ApiPath = keyof typeof QUERIES & keyof Answers;
/** A route's query as a caller writes it (numbers may be given as numbers or strings). */
export type Query<P extends ApiPath> = z.input<(typeof QUERIES)[P]>;
/** A route's query once the server parsed it. */
export type ParsedQuery<P extends ApiPath> = z.output<(typeof QUERIES)[P]>;
export type Answer<P extends ApiPath> = Answers[P];

/** `POST /api/review/confirm`'s body: the same fields as `passk review --confirm`. */
export const ConfirmBody = z.object({
  trace_id: z.string().min(1),
  dataset_id: z.string().min(1),
  expected: z.string().trim().min(1),
  reviewer: z.string().trim().min(1),
  note: z.string().optional(),
  /**
   * Confirm a trace whose agent version has no trials on the dataset's suite while other versions have some
   * (refused without): `passk review --confirm --any-agent`.
   */
  any_agent: z.boolean().optional(),
});
export type ConfirmBody = z.infer<typeof ConfirmBody>;
/**
 * Its answer: the FailureConfirmed's id (`published: false`: it was already in the log), the agent version that
 * recorded the trace, and `agent_check` when the agent check could not vouch for it (confirmed with `any_agent`,
 * no trials on the suite yet, the store did not answer), as `passk review --confirm` says it.
 */
export type ConfirmAnswer = {
  event_id: string;
  published: boolean;
  trace_id: string;
  dataset_id: string;
  agent_version: string;
  agent_check?: string;
};
export const CONFIRM_PATH = '/api/review/confirm';

/** Any error answer. */
export type ErrorAnswer = { error: string };
/** `GET /api/status`, and the `status` server-sent event. */
export type Status = { state: 'ok' } | { state: 'failed'; message: string };
