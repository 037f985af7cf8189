import { prefiltering } from './features.ts';
import { eachMatch, type Span, spanRedactor } from './text.ts';
import { pushAll } from '../../processors/core/arrays.ts';

/**
 * Secrets: keys and tokens of the common providers by their documented prefixes, JWTs, PEM blocks, credentials in
 * URLs, `Authorization` values, and the values of fields named like a password or a key. Every pattern starts with a
 * literal or a keyword and has bounded repetitions, so none is tried from every position of a long token.
 */
const PROVIDER_KEYS: readonly RegExp[] = [
  /\b(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, // AWS access key ids
  /\b(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,251}/g, // GitHub tokens
  /\b(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,255}/g,
  /\b(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{20,64}/g, // GitLab
  /\b(?<![A-Za-z0-9_])xox[abposr]-[A-Za-z0-9-]{10,250}/g, // Slack
  /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,120}/g,
  /\b(?<![A-Za-z0-9_])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,247}/g, // Stripe
  /\b(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{24,64}/g,
  /\b(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,250}/g, // Anthropic
  /\b(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}/g, // OpenAI
  /\b(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g, // Google API keys
  /\b(?<![A-Za-z0-9_-])ya29\.[0-9A-Za-z_-]{20,250}/g, // Google OAuth access tokens
  /\b(?<![A-Za-z0-9_-])GOCSPX-[0-9A-Za-z_-]{20,40}/g,
  /\b(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])/g, // Twilio
  /\b(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}/g, // SendGrid
  /\b(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g,
  /\b(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9])/g, // Hugging Face
  /\b(?<![A-Za-z0-9_-])key-[0-9a-f]{32}(?![A-Za-z0-9])/g, // Mailgun
  /\b(?<![A-Za-z0-9_])(?:pypi-|dop_v1_|shpat_|shpss_|lin_api_|xai-|gsk_|r8_|pplx-)[A-Za-z0-9_-]{20,250}/g,
  /\b(?<![A-Za-z0-9_-])AccountKey=[A-Za-z0-9+/=]{40,100}/g, // Azure storage
  /\b(?<![A-Za-z0-9_-])SharedAccessSignature[= ][^\s"';]{10,500}/g,
];

/** A JWT: three base64url parts, the first two JSON (`eyJ`). */
const JWT = /\b(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{0,2000}/g;

/** `Authorization: Bearer …` (any case, RFC 7235), `Basic …`, `token …`. */
const AUTH = /\b(?:bearer|basic|token|apikey|api-key)(?:\s{1,3}|\s{0,3}[:=]\s{0,3})([A-Za-z0-9._~+/-]{8,4096}=*)/gi;

/** `scheme://user:password@host`: the user and password. */
const URL_CREDENTIALS = /\b[a-z][a-z0-9+.-]{1,20}:\/\/([^\s/:@"'<>]{1,256}:[^\s/@"'<>]{1,256})@/gi;

/**
 * `password=…`, `"db_password": "…"`, `secret: …`: the value (3+ characters). The pattern starts at the keyword (a
 * literal the engine finds fast), not at every word: the key's own prefix (`db_`) needs no matching.
 */
const NAMED_SECRET =
  /(?:password|passwd|pwd|passphrase|secret)[a-z0-9_.-]{0,40}["']?\s{0,3}[:=]\s{0,3}["']?([^\s"',;&}{]{3,512})/gi;
/** `api_key=…`, `"access_token": "…"`: the value, when it is long enough to be a key (8+ characters). */
const NAMED_KEY =
  /(?:api_?key|apikey|access_?key|access_?token|auth_?token|refresh_?token|id_?token|private_?key|secret_?key|client_?secret|session_?token)[a-z0-9_.-]{0,30}["']?\s{0,3}[:=]\s{0,3}["']?([^\s"',;&}{]{8,512})/gi;
/** Any provider's prefix: when none is in the text, none of their patterns is run. */
const PROVIDER_HINT =
  /AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|_live_|_test_|whsec_|sk-|AIza|ya29\.|GOCSPX-|SK[0-9a-f]{8}|AC[0-9a-f]{8}|SG\.|npm_|hf_|key-|pypi-|dop_v1_|shpat_|shpss_|lin_api_|xai-|gsk_|r8_|pplx-|AccountKey=|SharedAccessSignature/;
const NAMED_HINT = /password|passwd|pwd|passphrase|secret|key|token/i;

const findPem = (text: string): Span[] => {
  const spans: Span[] = [];
  for (let at = text.indexOf('-----BEGIN '); at >= 0; at = text.indexOf('-----BEGIN ', at + 1)) {
    const head = /^-----BEGIN [A-Z0-9 ]{1,40}-----/.exec(text.slice(at, at + 60));
    if (!head) continue;
    const endAt = text.indexOf('-----END ', at + head[0].length);
    const close = endAt < 0 ? -1 : text.indexOf('-----', endAt + 9);
    // no END: everything after the header is the key (a clipped text cut it)
    const end = close < 0 ? text.length : close + 5;
    spans.push({ start: at, end, label: '[SECRET]' });
    at = end - 1;
  }
  return spans;
};

const groupSpans = (text: string, re: RegExp): Span[] => {
  const spans: Span[] = [];
  eachMatch(re, text, (m) => {
    const value = m[1];
    if (value === undefined) spans.push({ start: m.index, end: m.index + m[0].length, label: '[SECRET]' });
    else if (!(value.startsWith('[') && value.endsWith(']'))) {
      // (a value in brackets is redacted already)
      const start = m.index + m[0].lastIndexOf(value);
      spans.push({ start, end: start + value.length, label: '[SECRET]' });
    }
  });
  return spans;
};

/**
 * What every pattern above needs somewhere in the text (their hints, the AUTH and PEM keywords, `eyJ`, `://`), in one
 * case-insensitive pattern: a superset of each one's own test, so a text it does not match holds no secret they find.
 */
const ANY_HINT = new RegExp(
  `${PROVIDER_HINT.source}|${NAMED_HINT.source}|-----BEGIN |eyJ|:\\/\\/|bearer|basic|apikey|api-key`,
  'i',
);

export const findSecrets = (text: string): Span[] => {
  const spans: Span[] = [];
  if (prefiltering() && !ANY_HINT.test(text)) return spans;
  if (text.includes('-----BEGIN ')) pushAll(spans, findPem(text));
  if (text.includes('eyJ')) pushAll(spans, groupSpans(text, JWT));
  if (text.includes('://')) pushAll(spans, groupSpans(text, URL_CREDENTIALS));
  if (PROVIDER_HINT.test(text)) for (const re of PROVIDER_KEYS) pushAll(spans, groupSpans(text, re));
  pushAll(
    spans,
    groupSpans(text, AUTH).filter((s) => /\d|[A-Z].*[a-z]|[a-z].*[A-Z]|[._~+/-]/.test(text.slice(s.start, s.end))),
  );
  if (NAMED_HINT.test(text)) pushAll(pushAll(spans, groupSpans(text, NAMED_SECRET)), groupSpans(text, NAMED_KEY));
  return spans;
};

export const secretRedactor = spanRedactor('secret', findSecrets);
