/** The repeated-trial runner: agents (module, HTTP, command), graders, resumable runs. */
export { runAdaptive, type AdaptiveRunOptions, type AdaptiveSummary } from './adaptive.ts';
export * from './agents/index.ts';
export {
  confirmationRequests,
  runConfirmations,
  type ConfirmationRun,
  type ConfirmationsSummary,
  type RequestElsewhere,
} from './confirmations.ts';
export * from './dataset.ts';
export * from './graders/index.ts';
export { recordedAttempts } from './resume.ts';
export { DEFAULT_RUN_RETRY, runDataset, type RunDatasetDeps, type RunOptions } from './runDataset.ts';
export {
  attemptKey,
  DEFAULT_STOP_AFTER,
  plannedAttempts,
  runTrials,
  type RunDeps,
  type RunPlan,
  type RunProgress,
  type RunSummary,
} from './runTrials.ts';
export { runTrial, trialSeed, type TrialContext, type TrialOutcome } from './trial.ts';
