import { describe, expect, it } from 'vitest';
import { oneOfEach } from '../helpers/events.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
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
    // each command on a line of its own after the message (a terminal breaks it with ` \` so it pastes as one)
    expect(said[0]!.split('\n').slice(1)).toEqual(
      ['agent-1.0.0', 'agent-1.1.0'].map(
        (version) =>
          `  npx passk -X run --dataset ROWS.jsonl --agent AGENT_OF_${version} --suite refunds --agent-version ${version} --confirmations`,
      ),
    );
    for (const version of ['agent-1.0.0', 'agent-1.1.0'])
      expect(said[0]).toContain(
        `npx passk -X run --dataset ROWS.jsonl --agent AGENT_OF_${version} --suite refunds --agent-version ${version} --confirmations`,
      );
    expect(said[0]).not.toMatch(/(?<!npx )passk run/);
  });

  it('says them with the dataset file and agent the runs recorded, as gate --status does', async () => {
    const events = oneOfEach();
    const log = createMemoryLog();
    const gate = { ...events.GateEvaluated, gate_id: events.ConfirmationRequested.comparison_id };
    const finished = (version: string, seq: number, run: string) => ({
      ...events.RunFinished,
      event_id: deterministicEventId(events.RunFinished.occurred_at + seq, 'RunFinished', 90 + seq),
      run_id: run,
      agent: { version },
      dataset_path: 'data/refund rows.jsonl',
      agent_spec: `node agents/${version}.mjs`,
    });
    await log.publisher.publish([
      finished('agent-1.0.0', 1, 'run-a'),
      finished('agent-1.1.0', 2, 'run-b'),
      events.ConfirmationRequested,
      gate,
    ]);
    const said: string[] = [];
    await waitForVerdict(log, gate.gate_id, 60_000, (l) => said.push(l));
    expect(said).toHaveLength(1);
    for (const version of ['agent-1.0.0', 'agent-1.1.0'])
      expect(said[0]).toContain(
        `npx passk run --dataset 'data/refund rows.jsonl' --agent 'node agents/${version}.mjs' --suite refunds --agent-version ${version} --confirmations`,
      );
    expect(said[0]).not.toMatch(/ROWS\.jsonl|AGENT_OF_/);
  });
});
