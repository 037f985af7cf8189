import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/**
 * The unit tier is pure code (vitest.config.ts): a unit test that starts a process, opens a socket or loads a database
 * engine fails here at once, naming the tier it belongs to, instead of making the tier slow and flaky.
 */
const refuse = (what: string) => () => {
  throw new Error(`a unit test may not ${what}: name the file *.int.test.ts (CONTRIBUTING.md, "Test tiers")`);
};

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const)
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(`start a process (child_process.${name})`);
net.Server.prototype.listen = refuse('listen on a port') as never;
net.Socket.prototype.connect = refuse('open a connection') as never;
syncBuiltinESMExports();

// Both engines are native addons: refused where Node loads their binary, however the package was imported.
const dlopen = process.dlopen.bind(process);
process.dlopen = ((module: unknown, filename: string, ...rest: unknown[]) => {
  const engine = /better_sqlite3|chdb/i.exec(filename)?.[0];
  if (engine) refuse(`open a database engine (${engine})`)();
  return (dlopen as (...a: unknown[]) => unknown)(module, filename, ...rest);
}) as typeof process.dlopen;
