import { buildCli, removeCliBuild } from '../../deploy/test/cliBuild.mjs';

/**
 * The global setup of the projects whose files run the CLI as a child (int, kafka, browser): their `node
 * bin/passk.mjs …` children run one build of the sources (deploy/test/cliBuild.mjs) instead of each registering tsx.
 * `npm test` builds once for all its lanes and names the build in PASSK_CLI_BUILD; a project run alone builds here,
 * and removes its build at the end. The workers are forked after this runs, so they and their children see the variable.
 */
export default async function setup(): Promise<() => void> {
  if (process.env.PASSK_CLI_BUILD) return () => {};
  const dir = await buildCli();
  process.env.PASSK_CLI_BUILD = dir;
  return () => {
    removeCliBuild(dir);
    delete process.env.PASSK_CLI_BUILD;
  };
}
