/**
 * The width the environment gives terminal output: `COLUMNS`, as a shell, a CI job or a user sets it (the CLI reads it
 * as a width below `--width` and above the terminal's own: cli/format/render.ts). Here because only deploy/ reads the
 * environment.
 */
export const columnsOf = (env: NodeJS.ProcessEnv = process.env): string | undefined => env.COLUMNS;
