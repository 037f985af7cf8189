/** The review loop: sampled production failures for a reviewer, and their confirmation as FailureConfirmed. */
export {
  confirmFailure,
  confirmedTraceIds,
  failureConfirmed,
  findTrace,
  listProductionFailures,
  type Confirmation,
  type ConfirmRequest,
  type ProductionFailure,
} from './failures.ts';
export { failureSignals } from '../../processors/core/failureSignals.ts';
