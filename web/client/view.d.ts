import type { Answer } from '../contract.ts';

/**
 * What the dashboard shell (app.js) hands each view's `render`: the route's parameters, the suite and dataset
 * version in scope, and ways to change the route or name a parameter it could not use. Types only: the views
 * import it in JSDoc (`@import`), so the browser never loads this file.
 */
/** What the DOM builder `h` takes as children: nodes, text, nothing, or lists of them. */
export type Child = Node | string | number | boolean | null | undefined | readonly Child[];

export type Params = Readonly<Record<string, string | undefined>>;

/** One suite and dataset version with trials, and the agent versions that ran on it. */
export interface Scope {
  suite: string;
  dataset_version: string;
  last_at: number;
  versions: string[];
}

export interface NavigateOptions {
  /** Keep the current parameters and override some. */
  keep?: boolean;
}

/** A view module (views/*.js): what the shell reads of it. */
export interface ViewModule {
  readonly title: string;
  /** The parameters it takes besides the scope; any other is named in a warning. */
  readonly params?: readonly string[];
  /** The scope to open on when the URL names none (the Gates view: the latest gate's). */
  readonly scopeOf?: (scopes: readonly Scope[]) => Promise<Scope | undefined>;
  /** Asks ahead (`api.ahead`) the question render will ask for the scope the URL names (suite, dataset_version). */
  readonly prefetch?: (params: Params) => void;
  readonly render: (ctx: ViewContext) => Promise<HTMLElement>;
}

export interface ViewContext {
  readonly params: Params;
  readonly scope: Scope | null;
  readonly scopes: readonly Scope[];
  readonly groups: Answer<'/api/groups'>;
  /** Changes this view's parameters. */
  navigate(params: Record<string, string | undefined>, opts?: NavigateOptions): void;
  /** Opens another view. */
  go(view: string, params?: Record<string, string | undefined>, opts?: NavigateOptions): void;
  redraw(): void;
  /** Names a parameter whose value the view could not use (an unknown version, row, gate or trace). */
  warn(text: string): void;
}
