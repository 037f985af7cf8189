import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TraceInput } from '../sdk/inputs.ts';
import { createTraceSampler } from './sampler.ts';
import { createSqliteSpool } from './spool.ts';

const dir = mkdtempSync(join(tmpdir(), 'passk-spool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the OTLP spool (SQLite) across a restart', () => {
  it("keeps a closed window's trace ids: a trace sent again after a restart is not counted twice", async () => {
    const path = join(dir, 'otlp-spool.sqlite');
    const traces: TraceInput[] = [];
    const recorder = { recordTrace: async (t: TraceInput) => (traces.push(t), t.trace_id), flush: async () => {} };
    const policy = {
      rate: 1,
      cap: { max: 1, windowMs: 1_000 },
      alwaysKeep: { errors: false, negativeFeedback: false, tags: [] },
    };
    const offer = (sampler: ReturnType<typeof createTraceSampler>, id: string) =>
      sampler.offer({ trace_id: id, agent_version: 'v', input: id, occurred_at: 100 });
    let now = 0;
    const first = createSqliteSpool(path);
    const before = createTraceSampler({ policy, recorder, seed: 2, clock: () => now, spool: first });
    offer(before, 'a');
    offer(before, 'b');
    await before.persist();
    now = 1_500;
    before.tick(); // closed: its reservoir recorded, the window removed from the spool
    await before.persist();
    first.close(); // the process is killed; its client never had the answer for a and sends it again
    const second = createSqliteSpool(path);
    const after = createTraceSampler({ policy, recorder, seed: 3, clock: () => now, spool: second });
    expect(offer(after, 'a')).toMatchObject({ kept: 'pending' });
    await after.flush();
    second.close();
    expect(traces.reduce((sum, t) => sum + 1 / t.sampling.probability, 0)).toBe(2); // a and b, each once
  });
});
