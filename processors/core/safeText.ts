/**
 * Control characters in text that came from outside (a trace's input, a span name, a suite, row or version name): C0
 * but the line feed, DEL, C1, and the bidi overrides and isolates. Printed raw, they drive the terminal (erase lines,
 * move the cursor, print a fake `Gate: PASS`, set the title, write the clipboard with OSC 52) or reorder what is
 * shown.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escapeControl = (c: string): string => {
  const n = c.charCodeAt(0);
  if (n === 9) return '\\t';
  if (n === 13) return '\\r';
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};
/** Text made safe for a terminal: every control character shown as its escape (`\x1b`, `\r`, `\u202e`). */
export const safeText = (s: string): string => s.replace(CONTROL, escapeControl);
