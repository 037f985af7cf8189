import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFor, refundsBesideAnotherAgentsTraces } from '../helpers/cli.ts';

/**
 * A new user's walk through the README: the five commands filled dataset refunds with refund-agent's trials, then
 * `passk sample examples/traces.jsonl` and `passk review --confirm tr-… --dataset refunds` added a trace of
 * support-v3 (another agent: its input is a chat message, not an order) to refunds as a must-not-break row, without
 * a word. It is refused now, naming the agent versions, and confirmed with --any-agent, saying so.
 */
let dir: string;
const { cli, ok } = cliFor(() => ({ dataDir: join(dir, 'data'), timeoutMs: 170_000 }));
const confirm = (...more: string[]) =>
  cli('review', '--confirm', 'tr-0001', '--expected', 'approve', '--dataset', 'refunds', '--reviewer', 'ana', ...more);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-review-agent-'));
  await refundsBesideAnotherAgentsTraces(ok);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("review --confirm of another agent's trace", () => {
  it("is refused (exit 2), naming the trace's agent version and the versions with trials on the suite", async () => {
    const r = await confirm();
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const said = r.stderr.replace(/\s+/g, ' ');
    expect(said).toContain('trace tr-0001 was recorded by agent version support-v3');
    expect(said).toContain('no trials on suite refunds (its versions: refund-agent-v1)');
    expect(said).toContain('--any-agent');
    // nothing was published: the trace is still one to review
    const listed = JSON.parse((await ok('review', '--from', 'log', '--json')).stdout) as {
      failures: { trace_id: string }[];
    };
    expect(listed.failures.map((f) => f.trace_id)).toContain('tr-0001');
  });

  it('is confirmed with --any-agent, saying which agent version recorded it', async () => {
    const r = await confirm('--any-agent');
    expect(r.code, r.stderr).toBe(0);
    const said = r.stdout.replace(/\s+/g, ' ');
    expect(said).toContain('confirmed tr-0001 (agent version support-v3, segment ');
    expect(said).toContain(
      'support-v3 has no trials on suite refunds (refund-agent-v1): confirmed all the same (--any-agent)',
    );
  });
});
