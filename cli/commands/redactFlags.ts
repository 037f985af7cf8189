import { InvalidArgumentError } from 'commander';
import { DEFAULT_REDACTORS, patternRedactor, type Redactor } from '../../producers/redaction/index.ts';
import type { PasskConfig } from '../../deploy/config.ts';

/** `--redact NAME=REGEX`, repeatable: checked when the flag is read (bad input exits 2 naming it). */
export const redactFlag = (v: string, prior: [string, string][] = []): [string, string][] => {
  const at = v.indexOf('=');
  if (at <= 0 || !/^[A-Za-z][\w-]*$/.test(v.slice(0, at)))
    throw new InvalidArgumentError(`expected NAME=REGEX (a name of letters, digits, _ and -), got "${v}"`);
  try {
    new RegExp(v.slice(at + 1));
  } catch (e) {
    throw new InvalidArgumentError(`"${v.slice(at + 1)}" is not a regular expression: ${(e as Error).message}`);
  }
  return [...prior, [v.slice(0, at), v.slice(at + 1)]];
};

export const REDACT_HELP =
  'an extra redaction pattern, NAME=REGEX (repeatable): each match becomes [NAME]; also "redact" in passk.config.json';

/** The default redactors, then the config file's `redact` patterns, then the `--redact` flags'. */
export const redactorsOf = (
  config: Pick<PasskConfig, 'redact'>,
  flags: readonly [string, string][] = [],
): Redactor[] => [
  ...DEFAULT_REDACTORS,
  ...[...Object.entries(config.redact ?? {}), ...flags].map(([name, source]) =>
    patternRedactor(name, new RegExp(source)),
  ),
];
