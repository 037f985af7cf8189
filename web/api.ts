import type { z } from 'zod';
import type { PasskCommand } from '../schemas/commandLine.ts';
import { confirmCommands, suggestedCommands } from './commands.ts';
import { boundedComparison } from './compareAnswer.ts';
import { QUERIES, type Answer, type ApiPath, type ParsedQuery } from './contract.ts';
import type { DashboardData } from './data.ts';

/**
 * The JSON API: one GET route per view, each answering what contract.ts says; its query is validated with the
 * contract's schema, then passed to the data port.
 */
export class BadRequest extends Error {
  override name = 'BadRequest';
}

const parse = <T>(schema: z.ZodType<T>, params: URLSearchParams): T => {
  const r = schema.safeParse(Object.fromEntries(params));
  if (!r.success)
    throw new BadRequest(r.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; '));
  return r.data;
};

/** What a route knows beside the store: how a passk command is shown (the CLI's formatter, `passk serve`'s flags). */
export type RouteContext = { readonly command: PasskCommand };

type Handlers = {
  [P in ApiPath]: (data: DashboardData, q: ParsedQuery<P>, ctx: RouteContext) => Promise<Answer<P>>;
};

const HANDLERS: Handlers = {
  '/api/groups': (d) => d.groups(),
  '/api/overview': (d, q) => d.overview(q),
  // every list cut to its first rows, with its length (compareAnswer.ts): the answer's size does not grow with rows
  '/api/compare': async (d, q, { command }) => {
    const cmp = await d.compare(q);
    return cmp && { ...boundedComparison(cmp), confirm_commands: confirmCommands(cmp, command) };
  },
  '/api/row': (d, q) => d.row({ ...q, versions: q.versions.split(',').filter(Boolean) }),
  // one page of the explorer, filtered and sorted by the data port (the store: on per-row counts, storeRows.ts)
  '/api/rows': (d, q) => d.rows(q),
  '/api/gates': (d, q) => d.gates(q),
  '/api/production': (d) => d.production(),
  '/api/trace': (d, q) => d.trace(q),
  '/api/traces': (d, q) => d.traces({ ...q, failed: q.failed === 'true' }),
  '/api/judges': (d) => d.judges(),
  '/api/datasets': (d) => d.datasets(),
  '/api/dead-letters': (d) => d.deadLetters(),
  '/api/commands': async (_d, _q, { command }) => suggestedCommands(command),
};

type Route = (data: DashboardData, params: URLSearchParams, ctx: RouteContext) => Promise<unknown>;

const route =
  <P extends ApiPath>(path: P): Route =>
  (data, params, ctx) =>
    HANDLERS[path](data, parse(QUERIES[path] as unknown as z.ZodType<ParsedQuery<P>>, params), ctx);

export const ROUTES: Record<string, Route> = Object.fromEntries(
  (Object.keys(HANDLERS) as ApiPath[]).map((path) => [path, route(path)]),
);
