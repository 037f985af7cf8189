import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { sha256 } from '../../importers/common.ts';

/** A file a command names that is larger than this is not hashed into its agent version (weights, a data set). */
export const MAX_HASHED_BYTES = 4 * 1024 * 1024;

/**
 * The words of a shell command: split at unquoted blanks and at `;|&<>()`, with '…' and "…" quotes and backslash
 * escapes taken off. No expansion: `$VAR`, `~` and globs stay as written.
 */
export const commandWords = (command: string): string[] => {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < command.length) word += command[++i]!;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < command.length) word = (word ?? '') + command[++i]!;
    else if (/[\s;|&<>()]/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
};

export interface CommandFiles {
  /** Each file hashed: the word as written and the sha256 of its bytes. */
  readonly hashed: readonly { readonly word: string; readonly sha256: string }[];
  /** Files left out for their size (over MAX_HASHED_BYTES). */
  readonly skipped: readonly { readonly word: string; readonly bytes: number }[];
}

/**
 * The files a command names: each word that is an existing regular file relative to `cwd`, in the command's order,
 * once. Each is hashed by its contents (as a module agent's source is), so editing the script the command runs makes
 * a new agent version; what the script itself imports or reads is not followed.
 */
export const commandFiles = (command: string, cwd: string, maxBytes = MAX_HASHED_BYTES): CommandFiles => {
  const hashed: { word: string; sha256: string }[] = [];
  const skipped: { word: string; bytes: number }[] = [];
  for (const word of new Set(commandWords(command))) {
    if (word === '') continue;
    const path = resolve(cwd, word);
    try {
      const st = statSync(path);
      if (!st.isFile()) continue;
      if (st.size > maxBytes) skipped.push({ word, bytes: st.size });
      else hashed.push({ word, sha256: sha256(readFileSync(path)) });
    } catch {
      // not there, or not readable: not a file the command names
    }
  }
  return { hashed, skipped };
};
