/**
 * Producers: how results and traffic get into passk. The SDK recorder, the repeated-trial runner,
 * importers of other tools' results, the production trace sampler, and the file readers.
 */
export * from './sdk/index.ts';
export * from './runner/index.ts';
export { importFiles, eventToInput, type FileReport, type ImportDeps } from './importers/importFiles.ts';
export { detectFormat, FORMATS, parseResultsFile, type Format } from './importers/detect.ts';
export type { ImportOptions, ImportedTrial, ParsedFile } from './importers/common.ts';
export { summarize, type ImportSummary } from './importers/summary.ts';
export * from './sampler/index.ts';
export { existingEventIds, readLog, type ReadLogOptions } from './logReader.ts';
export { PRODUCER_VERSION } from './version.ts';
export * from './files/index.ts';
export * from './review/index.ts';
export * from './datasets/index.ts';
