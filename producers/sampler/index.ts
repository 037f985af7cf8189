/** The production trace sampler: policies with inclusion probabilities, PII redaction, input fingerprints. */
export {
  createTraceSampler,
  type Decision,
  type SamplerOptions,
  type SegmentStats,
  type TraceCandidate,
  type TraceSampler,
} from './sampler.ts';
export { withTraceSampling, type TraceSamplingOptions } from './middleware.ts';
export { alwaysKeepReason, rateOf, SamplingPolicy, type SamplingPolicyInput } from './policy.ts';
export { isNegativeFeedback } from '../../processors/core/failureSignals.ts';
export {
  cardRedactor,
  DEFAULT_REDACTORS,
  emailRedactor,
  patternRedactor,
  phoneRedactor,
  redactText,
  redactValue,
  type Redactor,
} from './redact.ts';
export { inputFingerprint, normalizeInput } from './fingerprint.ts';
export { sampleFile, TraceLine, type SampleFileReport } from './sampleFile.ts';
