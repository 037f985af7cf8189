import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The views the browser runs (web/client/, plain ES modules with `// @ts-check`) are type-checked by
 * `npm run typecheck` with web/client/tsconfig.json, their API answers typed by web/contract.ts, the contract the
 * server implements. A view planted in memory (nothing written into the tree) that reads a field no answer has must
 * be rejected; its clean twin must pass, so the failure is the contract's doing.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const clientDir = join(root, 'web/client');

/** The views' program as `tsc -p web/client` builds it, plus files that exist only in memory. */
const program = (planted: Map<string, string>) => {
  const configPath = join(clientDir, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, clientDir, undefined, configPath);
  const host = ts.createCompilerHost(parsed.options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => {
    const text = planted.get(name);
    return text === undefined ? getSourceFile(name, lang, ...rest) : ts.createSourceFile(name, text, lang);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => planted.has(name) || fileExists(name);
  return ts.createProgram([...parsed.fileNames, ...planted.keys()], parsed.options, host);
};

const view = (field: string) =>
  `// @ts-check\nimport { api } from '../api.js';\n` +
  `export const planted = async () => (await api.groups()).map((g) => g.${field});\n` +
  `export const planted2 = async () => (await api.production()).windows.map((w) => w.pass_rate);\n`;

describe('npm run typecheck covers the views', () => {
  it('runs the views through web/client/tsconfig.json', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.typecheck).toContain('tsc --noEmit -p web/client');
    expect(dirname(join(clientDir, 'tsconfig.json'))).toBe(clientDir);
  });

  it("rejects a view reading a field the API's answer does not have, or with an untyped parameter, and accepts its clean twin", () => {
    const bad = join(clientDir, 'views', `zzPlantedTypes${process.pid}.js`);
    const untyped = join(clientDir, 'views', `zzPlantedUntyped${process.pid}.js`);
    const clean = join(clientDir, 'views', `zzPlantedClean${process.pid}.js`);
    // one program for all three, with the options and files of `tsc -p web/client`; only the planted files are
    // checked (the whole views' program is `npm run typecheck`'s: checking all of it here took 20-odd seconds)
    const planted = new Map([
      [bad, view('agent_versionz')],
      [untyped, `// @ts-check\nexport const percent = (x) => \`\${Math.round(x * 100)}%\`;\n`],
      [clean, view('agent_version')],
    ]);
    const p = program(planted);
    const found = [...planted.keys()]
      .flatMap((name) => ts.getPreEmitDiagnostics(p, p.getSourceFile(name)))
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(found).toEqual([
      `${bad}: Property 'agent_versionz' does not exist on type 'VersionGroup'. Did you mean 'agent_version'?`,
      `${untyped}: Parameter 'x' implicitly has an 'any' type.`,
    ]);
    expect(existsSync(bad) || existsSync(untyped) || existsSync(clean)).toBe(false);
  }, 300_000);
});
