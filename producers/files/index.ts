/** Readers that turn trial, judgment, must-not-break and gate-rule files into typed values, with file:line:field errors. */
export * from './csv.ts';
export * from './fieldError.ts';
export * from './gateRulesFile.ts';
export * from './judgmentFile.ts';
export * from './mustNotBreakFile.ts';
export * from './publicTrial.ts';
export * from './readTrialFiles.ts';
export * from './toTrial.ts';
export * from './trialCsv.ts';
export * from './trialLines.ts';
