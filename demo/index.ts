/** The demo: dataset, simulated agents and production, and the orchestration of `passk demo`. */
export { runDemo, type DemoResult, type GateSummary, type VersionNumbers, DATASET_V1 } from './story.ts';
export type { DemoPipeline, DemoProgress, DemoStage } from './pipeline.ts';
export { BASELINE, CANDIDATE, FIXED, AGENT_VERSIONS, simulateTrial, type AgentVersion } from './agents.ts';
export { DEMO_SEED, DEMO_DATASET_ID, DemoRow, loadDemoDataset, DATASET_FILE } from './dataset/demoRow.ts';
export { generateDataset, MUST_NOT_BREAK_MIN_USD } from './dataset/generate.ts';
export { simulateProduction, findPlantedFailure, SAMPLING_POLICY } from './production.ts';
export { simulateJudgments } from './judges.ts';
