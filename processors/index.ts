/** The stream processors' public surface: the topologies, their ports, and the folds they run. */
export type {
  ConsumerOptions,
  DeadLetter,
  EventBatch,
  EventConsumer,
  EventLog,
  EventPublisher,
  EventSource,
  LogEvent,
  RawRecord,
} from './ports.ts';
export {
  trialTopology,
  type TrialPorts,
  type TrialProgress,
  type TrialSink,
  type TrialTopologyOptions,
  type VersionSnapshot,
} from './topologies/trials.ts';
export { datasetTopology } from './topologies/datasets.ts';
export { gateTopology, type GateTopologyOptions } from './topologies/gates.ts';
export { windowTopology, type WindowTopologyOptions } from './topologies/windows.ts';
export type { DecisionProgress, EventPorts, EventSink, TopologyOptions } from './topologies/eventPorts.ts';
export { AttemptRecord } from './core/rowState.ts';
export {
  StreamRowState,
  evolveRow,
  fromRowStateChanged,
  toRowStateChanged,
  type RowFoldOptions,
} from './folds/rowState.ts';
export {
  RowTableCheckpoint,
  checkpointOf,
  foldTrials,
  restoreTable,
  type RowChange,
  type RowTable,
} from './folds/rowTable.ts';
export {
  VersionSummary,
  applyRowChanges,
  numbersOf,
  versionKeyOf,
  type VersionSummaries,
} from './folds/versionSummary.ts';
export {
  DatasetState,
  decideFailure,
  evolveDataset,
  mustNotBreakAt,
  nextFailureVersion,
  rowsAt,
} from './core/datasets.ts';
export {
  ComparisonState,
  GateBook,
  decideComparison,
  emptyBook,
  evolveBook,
  foldBookInto,
  toRunClosed,
  type GateView,
} from './folds/gates.ts';
export {
  DEFAULT_WINDOWS,
  WindowSpec,
  WindowsState,
  foldTrace,
  restoreWindows,
  toWindowsSnapshot,
  type WindowOptions,
} from './folds/windows.ts';
export { alertFor, totalOf, type WindowTotal } from './folds/windowTotals.ts';
export type { PartitionOf } from './operators/rowStore.ts';
