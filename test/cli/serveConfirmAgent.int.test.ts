import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passkServer } from '../browser/processes.ts';
import { cliFor, refundsBesideAnotherAgentsTraces } from '../helpers/cli.ts';

/**
 * The dashboard's confirm action (`POST /api/review/confirm`, the Production view's form) checks the trace's agent
 * version as `passk review --confirm` does (reviewAgentVersion.int): after the README's commands filled dataset
 * refunds with refund-agent's trials, a sampled trace of support-v3 is refused naming the versions, and confirmed
 * with `any_agent` (the form's "confirm although it was recorded by another agent"), saying so.
 */
const WRITE_TOKEN = 'serve-confirm-agent-write-token';
let dir: string;
let server: Awaited<ReturnType<typeof passkServer>> | undefined;
let url: string;
const { ok } = cliFor(() => ({ dataDir: join(dir, 'data'), timeoutMs: 170_000 }));

const confirm = async (more: Record<string, unknown> = {}) => {
  const res = await fetch(new URL('/api/review/confirm', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITE_TOKEN}` },
    body: JSON.stringify({ trace_id: 'tr-0001', dataset_id: 'refunds', expected: 'approve', reviewer: 'ana', ...more }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-serve-confirm-agent-'));
  await refundsBesideAnotherAgentsTraces(ok);
  server = await passkServer(
    ['--data-dir', join(dir, 'data'), 'serve', '--port', '0', '--json', '--ingest-token', WRITE_TOKEN],
    (line) => (line.startsWith('{') && line.includes('"url"') ? line : undefined),
  );
  url = (JSON.parse(server.value) as { url: string }).url;
}, 400_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the dashboard's confirm action on another agent's trace", () => {
  it("is refused (400), naming the trace's agent version, the suite's versions and the override", async () => {
    const r = await confirm();
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    const said = String(r.body.error).replace(/\s+/g, ' ');
    expect(said).toContain('trace tr-0001 was recorded by agent version support-v3');
    expect(said).toContain('no trials on suite refunds (its versions: refund-agent-v1)');
    expect(said).toContain('confirm although it was recorded by another agent');
  });

  it('is confirmed with any_agent, naming the agent version that recorded it and saying it was confirmed all the same', async () => {
    const r = await confirm({ any_agent: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // published now: the refusal above published nothing (the same trace and dataset have the same event id)
    expect(r.body).toMatchObject({ published: true, trace_id: 'tr-0001', agent_version: 'support-v3' });
    expect(r.body.agent_check).toBe(
      'support-v3 has no trials on suite refunds (refund-agent-v1): confirmed all the same ' +
        '("confirm although it was recorded by another agent")',
    );
  });
});
