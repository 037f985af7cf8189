import { createRequire } from 'node:module';
import type { SchemaRegistry as LibraryRegistry } from '@kafkajs/confluent-schema-registry';
import type { JsonOptions } from '@kafkajs/confluent-schema-registry/dist/@types.js';
import type {
  SchemaRegistryAPIClient,
  SchemaRegistryAPIClientArgs,
} from '@kafkajs/confluent-schema-registry/dist/api/index.js';
import { COMPATIBILITY } from '@kafkajs/confluent-schema-registry/dist/constants.js';
import {
  ConfluentSchemaRegistryArgumentError,
  ConfluentSchemaRegistryCompatibilityError,
} from '@kafkajs/confluent-schema-registry/dist/errors.js';

type Middleware = NonNullable<SchemaRegistryAPIClientArgs['middlewares']>[number];

/** Every request gets a deadline (the library's own TimeoutMiddleware, which the client's types do not accept). */
const deadline =
  (ms: number): Middleware =>
  () => ({ prepareRequest: (next) => next().then((request) => request.enhance({ timeout: ms })) });

type AjvLike = NonNullable<JsonOptions['ajvInstance']>;
type Validate = ReturnType<AjvLike['compile']>;

const library = createRequire(import.meta.url).resolve('@kafkajs/confluent-schema-registry');
const requireFromLibrary = createRequire(library);

/**
 * The ajv the library itself uses (its own copy, 7.x), so a refusal is worded as the library's own validator words it.
 * Loaded at the first validation: a run whose records all pass passk's own validator never needs it.
 */
let libraryAjv: (new (o: object) => AjvLike) | undefined;
const LibraryAjv = () =>
  (libraryAjv ??= (requireFromLibrary('ajv') as { default: new (o: object) => AjvLike }).default);

/**
 * The client's JSON Schemas compiled at their first validation, not when they are registered or read. The library
 * compiles every schema it registers, each with an ajv of its own (the meta-schema compiled again each time): the
 * codec registers every event type at every open of a Kafka log, about 0.8 s of CPU at each start of `passk process`
 * (docs/performance.md), for validators the codec uses only to word why a record its own validator refused is bad.
 */
const compiledOnUse = (options: object): AjvLike => {
  const references = new Map<string | undefined, object>();
  return {
    // the schemas a registered one references (passk's have none), added to each ajv made at a first use
    addSchema: ((schema: object, id?: string) => void references.set(id, schema)) as unknown as AjvLike['addSchema'],
    compile: (schema: object): Validate => {
      let compiled: Validate | undefined;
      const validate = ((data: unknown) => {
        if (!compiled) {
          const ajv = new (LibraryAjv())(options);
          for (const [id, s] of references) ajv.addSchema(s, id);
          compiled = ajv.compile(schema);
        }
        const ok = compiled(data);
        validate.errors = compiled.errors;
        return ok;
      }) as Validate;
      return validate;
    },
  };
};

/** A registered JSON Schema, as the codec uses it: the library's `JsonSchema.isValid`. */
export interface RegisteredSchema {
  isValid(payload: object, opts?: { errorHook: (path: string[], message: unknown, schema?: unknown) => void }): boolean;
}

interface ConfluentSchema {
  readonly type: string;
  readonly schema: string;
  readonly references?: readonly { name: string; subject: string; version: number }[];
}

/**
 * The library's `JsonSchema` (dist/JsonSchema.js) without its module: that one requires ajv 7 at its load. Built the
 * same way (the referenced schemas added, the schema parsed and handed to the ajv, which compiles it at its first
 * use), and `isValid` answers as the library's does, its quirk included (an invalid payload with no `errorHook` is
 * reported valid).
 */
class JsonSchema implements RegisteredSchema {
  private readonly validate: Validate;
  constructor(
    schema: ConfluentSchema,
    opts: { ajvInstance?: AjvLike; referencedSchemas?: readonly ConfluentSchema[] },
  ) {
    const ajv = opts.ajvInstance!;
    for (const raw of opts.referencedSchemas ?? []) {
      const parsed = JSON.parse(raw.schema) as Record<string, unknown>;
      ajv.addSchema(parsed, parsed.$id as string | undefined);
    }
    this.validate = ajv.compile(JSON.parse(schema.schema) as object);
  }
  isValid(
    payload: object,
    opts?: { errorHook: (path: string[], message: unknown, schema?: unknown) => void },
  ): boolean {
    if (!this.validate(payload)) {
      if (opts?.errorHook) {
        for (const err of this.validate.errors as unknown as Record<string, unknown>[]) {
          const path = (err.dataPath != null ? err.dataPath : err.instancePath) as string;
          opts.errorHook([path], err.message ?? err.data, err.schema);
        }
        return false;
      }
    }
    return true;
  }
}

/**
 * What passk asks of the schema registry: the part of `@kafkajs/confluent-schema-registry`'s `SchemaRegistry` it
 * uses, with the same requests, answers, errors and retries (the library's own HTTP client, `dist/api`).
 */
export interface RegistryClient {
  register(
    schema: { type: string; schema: string; references?: ConfluentSchema['references'] },
    opts: { subject: string; compatibility?: COMPATIBILITY },
  ): Promise<{ id: number }>;
  getSchema(id: number): Promise<RegisteredSchema>;
  getLatestSchemaId(subject: string): Promise<number>;
}

interface Response {
  data(): Record<string, unknown>;
}

/**
 * `SchemaRegistry.register`, `getSchema` and `getLatestSchemaId` of the library (3.9, dist/SchemaRegistry.js) for
 * JSON Schemas, on the library's HTTP client, without loading the library's index: that requires avsc, protobufjs
 * and ajv 7 at its load (0.2 s of CPU at each start of a Kafka `passk process`, docs/performance.md), none of which a
 * JSON Schema needs until a refusal is worded. A schema of another type (Avro, Protobuf) is handed to the library's
 * own client, loaded then.
 */
class JsonRegistryClient implements RegistryClient {
  private readonly api: SchemaRegistryAPIClient;
  private readonly schemas = new Map<number, RegisteredSchema>();
  private readonly inFlight = new Map<number, Promise<Response>>();
  private fullClient: LibraryRegistry | undefined;
  constructor(
    private readonly args: SchemaRegistryAPIClientArgs,
    private readonly jsonOptions: JsonOptions,
  ) {
    const api = requireFromLibrary('./api/index.js') as {
      default: (a: SchemaRegistryAPIClientArgs) => SchemaRegistryAPIClient;
    };
    this.api = api.default(args);
  }

  /** The library's client, for a schema type passk does not write. */
  private full(): LibraryRegistry {
    if (!this.fullClient) {
      const { SchemaRegistry } = requireFromLibrary(library) as { SchemaRegistry: typeof LibraryRegistry };
      this.fullClient = new SchemaRegistry(this.args, { JSON: this.jsonOptions });
    }
    return this.fullClient;
  }

  /** The referenced schemas, depth first, each once (the library's `getreferencedSchemas`). */
  private async referenced(schema: ConfluentSchema, seen = new Set<string>()): Promise<ConfluentSchema[]> {
    let out: ConfluentSchema[] = [];
    for (const reference of schema.references ?? []) {
      const key = `${reference.name}-${reference.subject}-${reference.version}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const found = ((await this.api.Subject.version(reference)) as Response).data();
      const child: ConfluentSchema = {
        type: 'JSON',
        schema: found.schema as string,
        references: found.references as ConfluentSchema['references'],
      };
      out = out.concat(await this.referenced(child, seen));
      out.push(child);
    }
    return out;
  }

  private async instanceOf(schema: ConfluentSchema): Promise<RegisteredSchema> {
    const referencedSchemas = await this.referenced(schema);
    try {
      return new JsonSchema(schema, { ...this.jsonOptions, referencedSchemas });
    } catch (e) {
      if (e instanceof Error) throw new ConfluentSchemaRegistryArgumentError(e.message);
      throw e;
    }
  }

  async register(
    schema: { type: string; schema: string; references?: ConfluentSchema['references'] },
    userOpts: { subject: string; compatibility?: COMPATIBILITY },
  ): Promise<{ id: number }> {
    if (schema.type !== 'JSON') return this.full().register(schema as never, userOpts);
    const { compatibility } = { compatibility: COMPATIBILITY.BACKWARD, ...userOpts };
    const instance = await this.instanceOf(schema);
    const subject = userOpts.subject;
    let isFirstTimeRegistration = false;
    try {
      const { compatibilityLevel } = ((await this.api.Subject.config({ subject })) as Response).data() as {
        compatibilityLevel: string;
      };
      if (compatibilityLevel.toUpperCase() !== compatibility)
        throw new ConfluentSchemaRegistryCompatibilityError(
          `Compatibility does not match the configuration (${compatibility} != ${compatibilityLevel.toUpperCase()})`,
        );
    } catch (error) {
      if (!error || typeof error !== 'object' || !('status' in error) || error.status !== 404) throw error;
      isFirstTimeRegistration = true;
    }
    const response = (await this.api.Subject.register({
      subject,
      body: { schemaType: schema.type, schema: schema.schema, references: schema.references },
    })) as Response;
    if (compatibility && isFirstTimeRegistration)
      await this.api.Subject.updateConfig({ subject, body: { compatibility } });
    const registered = response.data() as { id: number };
    this.schemas.set(registered.id, instance);
    return registered;
  }

  async getSchema(id: number): Promise<RegisteredSchema> {
    const have = this.schemas.get(id);
    if (have) return have;
    // cache misses make one request per id (the library's `getSchemaOriginRequest`)
    let request = this.inFlight.get(id);
    if (!request) {
      request = (this.api.Schema.find({ id }) as Promise<Response>).finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, request);
    }
    const found = (await request).data();
    if (found.schemaType !== 'JSON') return (await this.full().getSchema(id)) as unknown as RegisteredSchema;
    const instance = await this.instanceOf({
      type: 'JSON',
      schema: found.schema as string,
      references: found.references as ConfluentSchema['references'],
    });
    this.schemas.set(id, instance);
    return instance;
  }

  async getLatestSchemaId(subject: string): Promise<number> {
    return (((await this.api.Subject.latestVersion({ subject })) as Response).data() as { id: number }).id;
  }
}

/** How long one schema-registry request may take before it is abandoned (and retried). @default 10000 */
export const REGISTRY_TIMEOUT_MS = 10_000;

/**
 * A schema-registry client whose every request has a deadline. The library's client has none, so a registry that
 * accepts the connection and then stalls would hold a producer forever. Each request is abandoned after `timeoutMs`
 * and retried with exponential backoff (at most 3 retries, up to 5 s apart) when the registry answered 5xx, timed out
 * or could not be reached; every call the client makes is safe to repeat (lookups, and registering a schema, which
 * returns the id it already has). After the retries the call fails with the last error, which the codec reports as
 * `BackendUnavailable` naming the subject.
 */
export const createRegistryClient = (opts: {
  readonly url: string;
  readonly clientId?: string;
  readonly timeoutMs?: number;
}): RegistryClient =>
  new JsonRegistryClient(
    {
      host: opts.url,
      ...(opts.clientId ? { clientId: opts.clientId } : {}),
      middlewares: [deadline(opts.timeoutMs ?? REGISTRY_TIMEOUT_MS)],
      retry: {
        retries: 3,
        enableRetry: () => true,
        // no HTTP answer (timeout, refused, reset) carries the client's error; a 4xx answer is the registry's word
        validateRetry: (r) => r.status() >= 500 || (r.errors?.length ?? 0) > 0,
      },
    },
    // ajv (inside the registry client) is told the union types zod emits are fine, and compiles each schema at its
    // first use
    { ajvInstance: compiledOnUse({ allowUnionTypes: true }) },
  );
