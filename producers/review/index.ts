/** The review loop: sampled production failures for a reviewer, and their confirmation as FailureConfirmed. */
export {
  confirmedTraceIds,
  failureConfirmed,
  failureSignals,
  findTrace,
  listProductionFailures,
  type Confirmation,
  type ProductionFailure,
} from './failures.ts';
