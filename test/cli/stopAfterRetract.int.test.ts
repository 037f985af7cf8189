import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFor } from '../helpers/cli.ts';

/**
 * A new user's trial: `passk run` stopped on a broken agent (--stop-after) and said nothing of the trials it had
 * recorded (5 with --stop-after 2 at --concurrency 4), which count against the version until retracted. Real CLI,
 * embedded log.
 */
let dir: string;
const { cli } = cliFor(() => ({ dataDir: join(dir, 'data'), cwd: dir, env: { NO_COLOR: '1', COLUMNS: '300' } }));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'passk-stop-after-'));
  writeFileSync(
    join(dir, 'rows.jsonl'),
    Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `r${i}`, input: 'c', expected: 'ok' })).join('\n') + '\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a run stopped on a broken agent', () => {
  it('says how many trials it recorded, why more than --stop-after, and the retract command to take them back', async () => {
    const r = await cli(
      ...['run', '--dataset', 'rows.jsonl', '--agent', 'cmd:exit 1', '--agent-version', 'v1', '--k', '3'],
      ...['--stop-after', '2', '--concurrency', '4'],
    );
    expect(r.code, r.stderr).toBe(3);
    const out = r.stdout.replace(/ \\\n\s+/g, ' ').replace(/\s+/g, ' ');
    const m = /(\d+) trials were recorded, more than --stop-after 2: the trials already in flight \(--concurrency/.exec(
      out,
    );
    expect(m, out).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(2);
    const retract = /npx passk --data-dir \S+ retract --run (run-[0-9a-f]+) --reason 'broken agent'/.exec(out);
    expect(retract, out).not.toBeNull();
    const done = await cli('retract', '--run', retract![1]!, '--reason', 'broken agent', '--json');
    expect(done.code, done.stderr).toBe(0);
  });
});
