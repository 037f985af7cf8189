import { describe, expect, it } from 'vitest';
import { wrapLine } from './render.ts';

describe('wrapLine', () => {
  it('breaks at word boundaries, every line within the width, no word lost', () => {
    const line = 'the quick brown fox jumps over the lazy dog '.repeat(5).trim();
    const out = wrapLine(line, 20).split('\n');
    expect(out.every((l) => l.length <= 20)).toBe(true);
    expect(out.join(' ')).toBe(line);
  });

  it('a word that ends exactly at the width stays whole and the next line starts with the next word', () => {
    const line = `${'a'.repeat(9)} ${'b'.repeat(10)} next`; // "aaaaaaaaa bbbbbbbbbb" is exactly 20
    expect(wrapLine(line, 20)).toBe(`${'a'.repeat(9)} ${'b'.repeat(10)}\nnext`);
  });

  it('cuts a word longer than the line, and hangs continuation lines under a bullet', () => {
    expect(wrapLine('x'.repeat(25), 10)).toBe('xxxxxxxxxx\nxxxxxxxxxx\nxxxxx');
    expect(wrapLine('  ✓ one two three four', 12)).toBe('  ✓ one two\n    three\n    four');
  });
});
