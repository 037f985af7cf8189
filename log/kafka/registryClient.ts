import { createRequire } from 'node:module';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { JsonOptions } from '@kafkajs/confluent-schema-registry/dist/@types.js';

type ClientArgs = ConstructorParameters<typeof SchemaRegistry>[0];
type Middleware = NonNullable<ClientArgs['middlewares']>[number];

/** Every request gets a deadline (the library's own TimeoutMiddleware, which the client's types do not accept). */
const deadline =
  (ms: number): Middleware =>
  () => ({ prepareRequest: (next) => next().then((request) => request.enhance({ timeout: ms })) });

type AjvLike = NonNullable<JsonOptions['ajvInstance']>;
type Validate = ReturnType<AjvLike['compile']>;

/** The ajv the library itself uses (its own copy, 7.x), so a refusal is worded as the library's own validator words it. */
const LibraryAjv = (() => {
  const library = createRequire(import.meta.url).resolve('@kafkajs/confluent-schema-registry');
  const ajv = createRequire(library)('ajv') as { default: new (o: object) => AjvLike };
  return ajv.default;
})();

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
          const ajv = new LibraryAjv(options);
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
}): SchemaRegistry =>
  new SchemaRegistry(
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
    { [SchemaType.JSON]: { ajvInstance: compiledOnUse({ allowUnionTypes: true }) } },
  );
