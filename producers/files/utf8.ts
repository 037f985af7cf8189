import { InputError } from '../../schemas/errors.ts';

/**
 * The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or -1. `complete` = false treats a sequence cut by the end of `bytes` as
 * well-formed (a chunk of a stream: the next chunk finishes it).
 */
export const invalidUtf8At = (bytes: Uint8Array, complete = true): number => {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      if (i + k >= n) return complete ? i : -1;
      const c = bytes[i + k]!;
      if (c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
};

/**
 * Refuses bytes that are not UTF-8, naming the file, the line and the byte offset in that line (1-based, as an editor
 * counts lines). `lineBase` and `offsetBase` place a chunk inside the file.
 */
export const checkUtf8 = (bytes: Uint8Array, file: string, lineBase = 1): void => {
  const at = invalidUtf8At(bytes);
  if (at < 0) return;
  let line = lineBase;
  let lineStart = 0;
  for (let i = 0; i < at; i++)
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  throw new InputError(
    `not valid UTF-8: byte 0x${bytes[at]!.toString(16).padStart(2, '0')} at byte ${at - lineStart + 1} of the line; save the file as UTF-8`,
    { file, line },
  );
};
