import { ESLint } from 'eslint';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- eslint.config.js is plain JavaScript, without declarations (its ARROWS are typed as Arrow below)
import { ARROWS } from '../../eslint.config.js';

/**
 * The lint rules enforce the layering the README draws (eslint.config.js): each violation is planted as a text linted
 * as if it were a file at its path (ESLint's `lintText`, with the config `npm run lint` uses; nothing is written into
 * the tree), and must be rejected with the layering rule. A clean twin of each planted text must pass, so a failure is
 * the rule's doing, not a syntax error's.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

type Plant = { path: string; bad: string; clean: string; rule: string; message?: string };
type Arrow = { files: string[]; forbidden: string[]; message: string };
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

/** The folder a rule's files glob names (its glob without the trailing any-file part). */
const roomOf = (glob: string): string => glob.replace(/\/\*\*\/\*\.ts$/, '');
/** A forbidden group as a path: `operators` (inside processors/) names processors/operators. */
const targetOf = (group: string): string =>
  ['operators', 'topologies', 'folds'].includes(group) ? `processors/${group}` : group;
const relative = (from: string, to: string): string => {
  const r = posix.relative(from, to);
  return r.startsWith('.') ? r : `./${r}`;
};

/** One planted violation of every arrow each rule forbids, linted as a file of the rule's room. */
const ARROW_PLANTS: Plant[] = (ARROWS as Arrow[]).flatMap((arrow, i) => {
  const room = roomOf(arrow.files[0]!);
  return arrow.forbidden.map((group, j) => {
    const target = targetOf(group);
    const spec = relative(room, target.endsWith('.ts') ? target : `${target}/zz.ts`);
    return {
      path: `${room}/zzPlantedLint${tag}_${i}_${j}.ts`,
      bad: `import { planted as p } from '${spec}';\nexport const planted = p;\n`,
      clean: room.startsWith('schemas')
        ? "import { z } from 'zod';\nexport const planted = z.string();\n"
        : `import { TOPICS } from '${relative(room, 'schemas/topics.ts')}';\nexport const planted = TOPICS;\n`,
      rule: 'no-restricted-imports',
      message: arrow.message,
    };
  });
});

/** docs/architecture.md's list of the arrows, as the rules give it. */
const arrowsMarkdown = (): string =>
  (ARROWS as Arrow[])
    .map(
      (a) =>
        `- \`${roomOf(a.files[0]!)}/\` must not import ${a.forbidden
          .map((g) => `\`${targetOf(g)}${g.endsWith('.ts') ? '' : '/'}\``)
          .join(', ')}`,
    )
    .join('\n');

/** Lints each planted text as if it were the file at its path: the same config `npm run lint` uses, nothing written. */
const lintPlants = async (variant: 'bad' | 'clean') => {
  const eslint = new ESLint({ cwd: root });
  const results = (
    await Promise.all(
      [...PLANTS, ...ARROW_PLANTS].map((p) => eslint.lintText(p[variant], { filePath: join(root, p.path) })),
    )
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

  it("rejects a planted violation of every arrow of every rule, with that rule's message", async () => {
    const { results } = await lintPlants('bad');
    expect(ARROW_PLANTS.length).toBeGreaterThan(40);
    for (const p of ARROW_PLANTS) {
      const r = results.find((x) => x.filePath === join(root, p.path));
      expect(
        r!.messages.map((m) => [m.ruleId, m.message.includes(p.message!)]),
        `${p.path}: ${p.bad}`,
      ).toContainEqual([p.rule, true]);
    }
  }, 120_000);

  it('is what docs/architecture.md lists', () => {
    const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    const listed = /<!-- arrows:start -->\n([\s\S]*?)\n<!-- arrows:end -->/.exec(doc)?.[1];
    expect(listed).toBe(arrowsMarkdown());
  });

  it('accepts the same texts without the violation, and no planted file exists', async () => {
    const { code, results } = await lintPlants('clean');
    expect(results.flatMap((r) => r.messages)).toEqual([]);
    expect(code).toBe(0);
    for (const p of [...PLANTS, ...ARROW_PLANTS]) expect(existsSync(join(root, p.path))).toBe(false);
  }, 120_000);
});
