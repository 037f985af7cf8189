import type { TestProject } from 'vitest/node';
import { buildCli, removeCliBuild } from '../../deploy/test/cliBuild.mjs';

/**
 * The global setup of the projects whose files run the CLI as a child (int, kafka, browser): their `node
 * bin/passk.mjs …` children run one build of the sources (deploy/test/cliBuild.mjs) instead of each registering tsx.
 * `npm test` builds once for all its lanes and names the build in PASSK_CLI_BUILD; a project run alone builds here,
 * and removes its build at the end. The workers are forked after this runs, so they and their children see the variable.
 *
 * In watch mode (`npx vitest`, not `vitest run`) there is no build, not even an inherited one: a build is made once
 * and a rerun after an edit would start children on the code as it was, so tests could pass on stale code. The
 * children run the sources under tsx instead, as a user's checkout does, and always see the edit.
 */
export default async function setup(project: { vitest: Pick<TestProject['vitest'], 'config'> }): Promise<() => void> {
  // (the run's own config: a project's `config.watch` is not set)
  if (project.vitest.config.watch) {
    delete process.env.PASSK_CLI_BUILD;
    return () => {};
  }
  if (process.env.PASSK_CLI_BUILD) return () => {};
  const dir = await buildCli();
  process.env.PASSK_CLI_BUILD = dir;
  return () => {
    removeCliBuild(dir);
    delete process.env.PASSK_CLI_BUILD;
  };
}
