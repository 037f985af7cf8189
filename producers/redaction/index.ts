/** PII and secret redaction: one component, used by every path that takes production text in. */
export {
  clipText,
  DEFAULT_REDACTORS,
  patternRedactor,
  personalDataIn,
  redactText,
  redactValue,
  type RedactValueOptions,
} from './redact.ts';
export { type Redactor, type Span, replaceSpans, spanRedactor } from './text.ts';
export { normalizeForRedaction, percentDecode, unescapeHtml, unescapeJson } from './normalize.ts';
export { emailRedactor } from './email.ts';
export { createPhoneRedactor, DEFAULT_BARE_REGIONS, findPhones, phoneRedactor, type PhoneOptions } from './phone.ts';
export { cardRedactor, ibanRedactor, nationalIdRedactor, ssnRedactor } from './numbers.ts';
export { findSecrets, secretRedactor } from './secrets.ts';
export { addressRedactor, findAddresses } from './address.ts';
