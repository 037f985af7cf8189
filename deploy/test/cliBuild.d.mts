/** Compiles the CLI into a new directory under .reports/ and answers its path (deploy/test/cliBuild.mjs). */
export declare const buildCli: () => Promise<string>;
export declare const removeCliBuild: (dir: string) => void;
/**
 * Whether the build directory `name` under .reports/ is left by a run that has ended (its pid ended in this pid
 * namespace, or it is older than a day). `now`, `ns` and `alive` default to the clock, this process's pid namespace
 * and `kill(pid, 0)`.
 */
export declare const isLeftBuild: (
  name: string,
  now?: number,
  ns?: number,
  alive?: (pid: number) => boolean,
) => boolean;
