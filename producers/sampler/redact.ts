/**
 * The redactor lives in producers/redaction (one component for every path); these names stay here for the code that
 * imported them from the sampler.
 */
export {
  addressRedactor,
  cardRedactor,
  DEFAULT_REDACTORS,
  emailRedactor,
  ibanRedactor,
  nationalIdRedactor,
  patternRedactor,
  personalDataIn,
  phoneRedactor,
  phoneRedactor as libphonenumberRedactor,
  redactText,
  redactValue,
  type Redactor,
  secretRedactor,
  ssnRedactor,
} from '../redaction/index.ts';
