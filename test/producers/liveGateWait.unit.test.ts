import { describe, expect, it } from 'vitest';
import { oneOfEach } from '../helpers/events.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { waitForVerdict } from '../../producers/gate/live.ts';

describe('waitForVerdict', () => {
  it("says the confirmation runs the processors ask for as complete commands, in the caller's format", async () => {
    const events = oneOfEach();
    const log = createMemoryLog();
    const gate = { ...events.GateEvaluated, gate_id: events.ConfirmationRequested.comparison_id };
    await log.publisher.publish([events.ConfirmationRequested, gate]);
    const said: string[] = [];
    const verdict = await waitForVerdict(
      log,
      gate.gate_id,
      60_000,
      (l) => said.push(l),
      (args) => `npx passk -X ${args}`,
    );
    expect(verdict?.gate_id).toBe(gate.gate_id);
    expect(said).toHaveLength(1);
    for (const version of ['agent-1.0.0', 'agent-1.1.0'])
      expect(said[0]).toContain(
        `npx passk -X run --dataset ROWS.jsonl --agent AGENT_OF_${version} --suite refunds --agent-version ${version} --confirmations`,
      );
    expect(said[0]).not.toMatch(/(?<!npx )passk run/);
  });
});
