import * as crypto from 'node:crypto';

/**
 * SHA-256 of a text: Node's one-shot `crypto.hash` (Node ≥ 20.12) skips the Hash object `createHash` makes for
 * every call, a third of a short hash's time on the OTLP receiver's path (issue #25). An older Node gets the same
 * digest through `createHash`.
 */
const oneShot = typeof crypto.hash === 'function';

export const sha256Text = (data: string, encoding: 'hex' | 'base64url'): string =>
  oneShot ? crypto.hash('sha256', data, encoding) : crypto.createHash('sha256').update(data).digest(encoding);

export const sha256Bytes = (data: string): Buffer =>
  oneShot ? crypto.hash('sha256', data, 'buffer') : crypto.createHash('sha256').update(data).digest();
