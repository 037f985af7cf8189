import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../schemas/events/index.ts';
import { TOPIC_OF } from '../../schemas/topics.ts';

/** The README's events table names every event of EVENT_SCHEMAS once, each with the topic it is published to. */
const table = (): Map<string, string> => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('| event | topic (key) |');
  expect(start).toBeGreaterThan(-1);
  const rows = readme.slice(start).split('\n\n')[0]!.split('\n').slice(2);
  const topics = new Map<string, string>();
  for (const row of rows) {
    const [, events, where] = row.split('|').map((c) => c.trim());
    const topic = /^`([^`]+)`/.exec(where!)?.[1];
    for (const [, event] of events!.matchAll(/`(\w+)`/g)) {
      expect(topics.has(event!), `${event} listed twice`).toBe(false);
      topics.set(event!, topic!);
    }
  }
  return topics;
};

describe("the README's events table", () => {
  it('lists every event type once, with its topic', () => {
    const listed = table();
    expect([...listed.keys()].sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) expect(listed.get(type), type).toBe(TOPIC_OF[type]);
  });
});
