import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import {
  createRegistryClient,
  createRegistryCodec,
  registerJsonSchema,
  registeredSchemaOf,
  SchemaRejected,
} from '../../log/index.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { EVENT_TYPES } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { subjectOf } from '../../schemas/jsonSchema.ts';
import { allEventSamples, trial } from '../helpers/events.ts';

const registryUrl = inject('schemaRegistryUrl');
const newClient = () => createRegistryClient({ url: registryUrl });
// a fresh subject prefix per run: reruns against a long-lived registry never collide
const prefix = () => `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;

const api = async (path: string): Promise<unknown> => {
  const res = await fetch(`${registryUrl}${path}`, { headers: { accept: 'application/vnd.schemaregistry.v1+json' } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

type JsonSchema = { properties: Record<string, unknown>; required: string[] };
const sample = (type: string) => {
  const e = allEventSamples().find((x) => x.type === type);
  if (!e) throw new Error(`no sample ${type}`);
  return e;
};
const trialSchema = () => registeredSchemaOf('TrialRecorded') as unknown as JsonSchema;

describe('schema registry (JSON Schema, BACKWARD)', () => {
  it('registers every event schema, with BACKWARD compatibility, and round-trips one event of each type', async () => {
    const p = prefix();
    const codec = await createRegistryCodec({ registry: newClient(), subjectPrefix: p });
    expect([...codec.ids.keys()].sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const subject = p + subjectOf(type);
      expect(await api(`/subjects/${encodeURIComponent(subject)}/versions`)).toEqual([1]);
      expect(await api(`/config/${encodeURIComponent(subject)}`)).toMatchObject({ compatibilityLevel: 'BACKWARD' });
      const latest = (await api(`/subjects/${encodeURIComponent(subject)}/versions/latest`)) as {
        id: number;
        schemaType?: string;
      };
      expect(latest.id).toBe(codec.ids.get(type));
      expect(latest.schemaType).toBe('JSON');
    }
    for (const event of allEventSamples()) {
      const bytes = await codec.encode(event);
      expect(bytes[0]).toBe(0); // Confluent wire format: magic byte, then the schema id
      expect(new DataView(bytes.buffer, bytes.byteOffset).getInt32(1)).toBe(codec.ids.get(event.type));
      expect(await codec.decode(bytes)).toEqual(event);
    }
    // registering the same schemas again is idempotent: same ids, still version 1
    const again = await createRegistryCodec({ registry: newClient(), subjectPrefix: p });
    expect(again.ids).toEqual(codec.ids);
  });

  it('accepts a compatible change as version 2, refuses an incompatible one, and still decodes v1 data', async () => {
    const p = prefix();
    const registry = newClient();
    const v1codec = await createRegistryCodec({ registry, subjectPrefix: p });
    const subject = p + subjectOf('TrialRecorded');
    const event = trial({ seq: 42 });
    const v1bytes = await v1codec.encode(event);

    // compatible: a new optional field
    const v2 = trialSchema();
    v2.properties.reviewer_note = { type: 'string' };
    const v2id = await registerJsonSchema({ registry, subject, schema: v2 });
    expect(v2id).not.toBe(v1codec.ids.get('TrialRecorded'));
    expect(await api(`/subjects/${encodeURIComponent(subject)}/versions`)).toEqual([1, 2]);
    expect(await api(`/subjects/${encodeURIComponent(subject)}/versions/2`)).toMatchObject({ id: v2id, version: 2 });

    // incompatible: a new required field (data written with v2 has no such field)
    const v3 = trialSchema();
    v3.properties.reviewer_note = { type: 'string' };
    v3.properties.cost_center = { type: 'string' };
    v3.required = [...v3.required, 'cost_center'];
    const refused = await registerJsonSchema({ registry, subject, schema: v3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(SchemaRejected);
    expect((refused as SchemaRejected).retriable).toBe(false);
    expect((refused as SchemaRejected).subject).toBe(subject);
    expect((refused as SchemaRejected).cause).toMatchObject({ status: 409 }); // refused by the registry itself
    expect(await api(`/subjects/${encodeURIComponent(subject)}/versions`)).toEqual([1, 2]);

    // incompatible: a field changes type
    const v4 = trialSchema();
    v4.properties.attempt = { type: 'string' };
    await expect(registerJsonSchema({ registry, subject, schema: v4 })).rejects.toBeInstanceOf(SchemaRejected);

    // a reader that never saw v1 (no cache) still decodes v1 bytes after v2 exists
    const reader = await createRegistryCodec({ registry: newClient(), subjectPrefix: prefix() });
    expect(await reader.decode(v1bytes)).toEqual(event);
  });

  it('accepts schema version 2 of DatasetRowUpserted, GateEvaluated and RunFinished over version 1 (new optional fields only)', async () => {
    const p = prefix();
    const registry = newClient();
    type Node = { properties: Record<string, Node>; items?: Node };
    const drop = (schema: Record<string, unknown>, at: (s: Node) => Node, names: string[]) => {
      const copy = structuredClone(schema) as unknown as Node;
      for (const n of names) delete at(copy).properties[n];
      return copy;
    };
    // version 1 as passk registered it before: the same closed schemas without the fields version 2 added
    const v1 = {
      DatasetRowUpserted: drop(registeredSchemaOf('DatasetRowUpserted'), (s) => s, ['expected_checks', 'removed']),
      GateEvaluated: drop(
        drop(registeredSchemaOf('GateEvaluated'), (s) => s, ['must_not_break']) as unknown as Record<string, unknown>,
        (s) => s.properties.reasons!.items!,
        ['suite', 'dataset_version'],
      ),
      // RunFinished before the dataset file and agent of a passk run (issue 32)
      RunFinished: drop(registeredSchemaOf('RunFinished'), (s) => s, ['dataset_path', 'agent_spec']),
    };
    for (const [type, old] of Object.entries(v1) as [keyof typeof v1, Node][]) {
      const subject = p + subjectOf(type);
      const added = { GateEvaluated: '"must_not_break"', DatasetRowUpserted: '"removed"', RunFinished: '"agent_spec"' };
      expect(JSON.stringify(old)).not.toContain(added[type]);
      const oldId = await registerJsonSchema({ registry, subject, schema: old });
      const newId = await registerJsonSchema({ registry, subject, schema: registeredSchemaOf(type) });
      expect(newId).not.toBe(oldId);
      expect(await api(`/subjects/${encodeURIComponent(subject)}/versions`)).toEqual([1, 2]);
    }
  });

  it('accepts schema version 2 of RowStateChanged over version 1 as registered before, and decodes a version 1 record', async () => {
    const p = prefix();
    const registry = newClient();
    const subject = p + subjectOf('RowStateChanged');
    // version 1 exactly as passk registered it before the one attempt record (attempts with checks as a record)
    const v1 = JSON.parse(
      readFileSync(join(import.meta.dirname, '../fixtures/registry/RowStateChanged.v1.schema.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(JSON.stringify(v1)).not.toContain('attempt_records');
    const v1Id = await registerJsonSchema({ registry, subject, schema: v1 });
    const codec = await createRegistryCodec({ registry, subjectPrefix: p }); // registers version 2 over it
    expect(codec.ids.get('RowStateChanged')).not.toBe(v1Id);
    expect(await api(`/subjects/${encodeURIComponent(subject)}/versions`)).toEqual([1, 2]);

    // a record an older passk wrote, framed with the version 1 schema id: it restores, with the documented fallbacks
    const trialId = deterministicEventId(1_767_225_600_000, 'old-trial');
    const old = {
      ...sample('RowStateChanged'),
      schema_version: 1,
      attempt_records: undefined,
      tags: undefined,
      attempts: [
        { attempt: 0, run_id: 'run-1', event_id: trialId, passed: true, output: 'h', checks: { b: 1, a: 'x' } },
      ],
    };
    const payload = new TextEncoder().encode(JSON.stringify(old));
    const bytes = new Uint8Array(5 + payload.length);
    bytes[0] = 0;
    new DataView(bytes.buffer).setInt32(1, v1Id);
    bytes.set(payload, 5);
    const decoded = await codec.decode(bytes);
    expect(decoded).toMatchObject({
      type: 'RowStateChanged',
      attempt_records: [
        {
          event_id: trialId,
          run_id: 'run-1',
          attempt: 0,
          occurred_at: 1_767_225_600_000, // the event id's time
          passed: true,
          output_hash: 'h',
          checks: [
            { name: 'b', answer: 1 },
            { name: 'a', answer: 'x' },
          ],
          forbidden_actions: [],
        },
      ],
    });
    expect(decoded).not.toHaveProperty('attempts');
    // and version 2 records round-trip under the new id
    const current = sample('RowStateChanged');
    expect(await codec.decode(await codec.encode(current))).toEqual(current);
  });

  it('refuses bytes that are not a valid event with a reason naming what is wrong', async () => {
    const codec = await createRegistryCodec({ registry: newClient(), subjectPrefix: prefix() });
    const valid = await codec.encode(trial({ seq: 1 }));
    const frame = valid.subarray(0, 5);
    const reason = async (bytes: Uint8Array) =>
      codec.decode(bytes).then(
        () => 'decoded',
        (e: unknown) => (e instanceof InvalidEvent ? e.reason : `not InvalidEvent: ${String(e)}`),
      );
    expect(await reason(new TextEncoder().encode('{"type":"TrialRecorded"}'))).toMatch(/^not wire format/);
    expect(await reason(new Uint8Array([0, 0, 0]))).toMatch(/^not wire format/);
    expect(await reason(new Uint8Array([0, 0x7f, 0xff, 0xff, 0xf0, 0x7b, 0x7d]))).toMatch(
      /^unknown schema id 2147483632/,
    );
    expect(await reason(new Uint8Array([...frame, ...new TextEncoder().encode('{"broken":')]))).toMatch(/^json/);
    const missing = new TextEncoder().encode(JSON.stringify({ ...trial({ seq: 1 }), row_id: undefined }));
    expect(await reason(new Uint8Array([...frame, ...missing]))).toMatch(/^schema: .*row_id/);
  });

  it('decodeNow: nothing before a schema is read, then what decode gives, and the same refusals', async () => {
    const p = prefix();
    const writer = await createRegistryCodec({ registry: newClient(), subjectPrefix: p });
    const reader = await createRegistryCodec({ registry: newClient(), subjectPrefix: p });
    const bytes = await writer.encode(trial({ seq: 1 }));
    expect(reader.decodeNow(bytes)).toBeUndefined(); // its schema is not read yet: only decode can
    const event = await reader.decode(bytes);
    expect(reader.decodeNow(bytes)).toEqual(event);
    const frame = bytes.subarray(0, 5);
    const refusal = (f: () => unknown) => {
      try {
        f();
        return 'decoded';
      } catch (e) {
        return e instanceof InvalidEvent ? e.reason : `not InvalidEvent: ${String(e)}`;
      }
    };
    for (const bad of [
      new Uint8Array([0, 0, 0]),
      new Uint8Array([...frame, ...new TextEncoder().encode('{"broken":')]),
      new Uint8Array([
        ...frame,
        ...new TextEncoder().encode(JSON.stringify({ ...trial({ seq: 1 }), row_id: undefined })),
      ]),
    ]) {
      const now = refusal(() => reader.decodeNow(bad));
      expect(now).not.toBe('decoded');
      expect(now).toBe(
        await reader.decode(bad).then(
          () => 'decoded',
          (e: unknown) => (e as InvalidEvent).reason,
        ),
      );
    }
  });
});
