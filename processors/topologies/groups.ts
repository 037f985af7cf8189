import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS, type Topic } from '../../schemas/topics.ts';

// What the archive and dead-letter topologies (archive.ts, ingestLetters.ts) consume, without their operators: the
// store's ledger (deploy/drift.ts) names the same groups, and `passk check` reads it without loading rxjs.

/**
 * Events no fold consumes but the store must hold as they are: judge verdicts and human labels (the Judges view,
 * `judgeCalibration`), and the gate verdicts other processes publish (`passk gate`, `passk demo`; the Gates view,
 * `gateHistory`). One group per topic copies them to the store, committing once they are durable; the store's
 * tables are keyed by event id, so a replay writes nothing twice.
 */
export const ARCHIVED: ReadonlyMap<Topic, ReadonlySet<PasskEvent['type']>> = new Map<
  Topic,
  ReadonlySet<PasskEvent['type']>
>([
  [TOPICS.judgments, new Set(['JudgmentRecorded', 'LabelRecorded'])],
  [TOPICS.decisions, new Set(['GateEvaluated'])],
]);

/** The group that follows the dead-letter topic into the store. */
export const INGEST_LETTERS_GROUP = 'passk-dead-letters';
