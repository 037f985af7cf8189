import { z } from 'zod';
import { AdaptiveRoundDecided } from './adaptive.ts';
import { ComparisonDeclared, ConfirmationRequested, RunClosed } from './comparisons.ts';
import { DatasetRowUpserted, FailureConfirmed } from './datasets.ts';
import { GateBookSnapshot } from './gateBookSnapshot.ts';
import { GateEvaluated, RowStateChanged } from './decisions.ts';
import { JudgmentRecorded, LabelRecorded } from './judgments.ts';
import { RunFinished } from './runFinished.ts';
import { RunRetracted } from './runRetracted.ts';
import { TraceSampled } from './traceSampled.ts';
import { TraceWindowsUpdated } from './traceWindowsUpdated.ts';
import { TrialRecorded } from './trialRecorded.ts';
import { WindowAlertRaised } from './windowAlertRaised.ts';

export * from './adaptive.ts';
export * from './comparisons.ts';
export * from './datasets.ts';
export * from './gateBookSnapshot.ts';
export * from './decisions.ts';
export * from './judgments.ts';
export * from './runFinished.ts';
export * from './runRetracted.ts';
export * from './traceSampled.ts';
export * from './traceWindowsUpdated.ts';
export * from './trialRecorded.ts';
export * from './windowAlertRaised.ts';

/** Every event schema, by its `type`. */
export const EVENT_SCHEMAS = {
  TrialRecorded,
  TraceSampled,
  JudgmentRecorded,
  LabelRecorded,
  DatasetRowUpserted,
  FailureConfirmed,
  GateEvaluated,
  RowStateChanged,
  RunFinished,
  RunRetracted,
  ComparisonDeclared,
  ConfirmationRequested,
  RunClosed,
  WindowAlertRaised,
  TraceWindowsUpdated,
  AdaptiveRoundDecided,
  GateBookSnapshot,
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];

export const PasskEvent = z.discriminatedUnion('type', [
  TrialRecorded,
  TraceSampled,
  JudgmentRecorded,
  LabelRecorded,
  DatasetRowUpserted,
  FailureConfirmed,
  GateEvaluated,
  RowStateChanged,
  RunFinished,
  RunRetracted,
  ComparisonDeclared,
  ConfirmationRequested,
  RunClosed,
  WindowAlertRaised,
  TraceWindowsUpdated,
  AdaptiveRoundDecided,
  GateBookSnapshot,
]);
export type PasskEvent = z.infer<typeof PasskEvent>;
export type EventOf<T extends EventType> = Extract<PasskEvent, { type: T }>;
