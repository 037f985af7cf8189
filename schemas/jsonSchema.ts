import { z } from 'zod';
import { EVENT_SCHEMAS, type EventType } from './events/index.ts';
import { TOPIC_OF } from './topics.ts';

/** Registry subject of an event type: one subject per event (RecordNameStrategy-like), so one topic can hold several. */
export const subjectOf = (type: EventType): string => `${TOPIC_OF[type]}-${type}`;

/** The JSON Schema registered for an event type, generated from its zod schema. */
export const jsonSchemaOf = (type: EventType): Record<string, unknown> => {
  const schema = z.toJSONSchema(EVENT_SCHEMAS[type], { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  return { ...schema, title: type };
};
