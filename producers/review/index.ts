/** The review loop: sampled production failures for a reviewer, and their confirmation as FailureConfirmed. */
export {
  confirmFailure,
  confirmedTraceIds,
  failureConfirmed,
  failureSignals,
  findTrace,
  listProductionFailures,
  type Confirmation,
  type ConfirmRequest,
  type ProductionFailure,
} from './failures.ts';
