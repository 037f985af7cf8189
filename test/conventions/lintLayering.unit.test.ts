import { execFile } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The lint rules enforce the layering the README draws (eslint.config.js): violations are planted in the tree as
 * temporary files, eslint — the same binary and config `npm run lint` runs — must reject each with the layering rule,
 * and the files are removed in `finally` whatever happens. A clean twin of each planted file must pass, so a failure
 * is the rule's doing, not a syntax error's.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');

type Plant = { path: string; bad: string; clean: string; rule: string };
const tag = `${process.pid}`;
const PLANTS: Plant[] = [
  {
    path: `processors/core/zzPlantedLint${tag}.ts`,
    bad: "import { trialTopology } from '../topologies/trials.ts';\nexport const planted = trialTopology;\n",
    clean: "import { hashString } from './hash.ts';\nexport const planted = hashString;\n",
    rule: 'no-restricted-imports',
  },
  {
    path: `cli/zzPlantedLint${tag}.ts`,
    bad: 'export const planted = process.env.HOME;\n',
    clean: 'export const planted = process.cwd();\n',
    rule: 'no-restricted-properties',
  },
  {
    path: `producers/zzPlantedLint${tag}.ts`,
    bad: "import { select } from '../sinks/clickhouse/queries/select.ts';\nexport const planted = select;\n",
    clean: "import { TOPICS } from '../schemas/topics.ts';\nexport const planted = TOPICS;\n",
    rule: 'no-restricted-imports',
  },
  {
    path: `schemas/zzPlantedLint${tag}.ts`,
    bad: "import { ulid } from 'ulid';\nexport const planted = ulid;\n",
    clean: "import { z } from 'zod';\nexport const planted = z.string();\n",
    rule: 'no-restricted-imports',
  },
];

type Result = { filePath: string; messages: { ruleId: string | null; message: string }[] };
const lint = (files: string[]): Promise<{ code: number; results: Result[] }> =>
  new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [eslint, '--format', 'json', '--no-warn-ignored', ...files],
      { cwd: root, maxBuffer: 16 << 20 },
      (err, stdout) => {
        try {
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, results: JSON.parse(stdout) as Result[] });
        } catch (e) {
          reject(new Error(`eslint printed no JSON (${String(e)}): ${stdout}`));
        }
      },
    ),
  );

const planted = async (variant: 'bad' | 'clean') => {
  try {
    for (const p of PLANTS) writeFileSync(join(root, p.path), p[variant]);
    return await lint(PLANTS.map((p) => p.path));
  } finally {
    for (const p of PLANTS) rmSync(join(root, p.path), { force: true });
  }
};

describe('npm run lint enforces the layering', () => {
  it('rejects core importing a topology, process.env in cli/, producers importing sinks, schemas importing a package', async () => {
    const { code, results } = await planted('bad');
    expect(code).toBe(1);
    for (const p of PLANTS) {
      const r = results.find((x) => x.filePath === join(root, p.path));
      expect(r, p.path).toBeDefined();
      expect(
        r!.messages.map((m) => m.ruleId),
        p.path,
      ).toContain(p.rule);
    }
  }, 120_000);

  it('accepts the same files without the violation, and leaves nothing planted behind', async () => {
    const { code, results } = await planted('clean');
    expect(results.flatMap((r) => r.messages)).toEqual([]);
    expect(code).toBe(0);
    for (const p of PLANTS) expect(existsSync(join(root, p.path))).toBe(false);
  }, 120_000);
});
