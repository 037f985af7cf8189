import { ESLint } from 'eslint';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The lint rules enforce the layering the README draws (eslint.config.js): each violation is planted as a text linted
 * as if it were a file at its path (ESLint's `lintText`, with the config `npm run lint` uses; nothing is written into
 * the tree), and must be rejected with the layering rule. A clean twin of each planted text must pass, so a failure is
 * the rule's doing, not a syntax error's.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

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

/** Lints each planted text as if it were the file at its path: the same config `npm run lint` uses, nothing written. */
const lintPlants = async (variant: 'bad' | 'clean') => {
  const eslint = new ESLint({ cwd: root });
  const results = (
    await Promise.all(PLANTS.map((p) => eslint.lintText(p[variant], { filePath: join(root, p.path) })))
  ).flat();
  return { code: results.some((r) => r.errorCount > 0) ? 1 : 0, results };
};

describe('npm run lint enforces the layering', () => {
  it('rejects core importing a topology, process.env in cli/, producers importing sinks, schemas importing a package', async () => {
    const { code, results } = await lintPlants('bad');
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

  it('accepts the same texts without the violation, and no planted file exists', async () => {
    const { code, results } = await lintPlants('clean');
    expect(results.flatMap((r) => r.messages)).toEqual([]);
    expect(code).toBe(0);
    for (const p of PLANTS) expect(existsSync(join(root, p.path))).toBe(false);
  }, 120_000);
});
