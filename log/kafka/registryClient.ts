import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';

type ClientArgs = ConstructorParameters<typeof SchemaRegistry>[0];
type Middleware = NonNullable<ClientArgs['middlewares']>[number];

/** Every request gets a deadline (the library's own TimeoutMiddleware, which the client's types do not accept). */
const deadline =
  (ms: number): Middleware =>
  () => ({ prepareRequest: (next) => next().then((request) => request.enhance({ timeout: ms })) });

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
    // ajv (inside the registry client) is told the union types zod emits are fine
    { [SchemaType.JSON]: { allowUnionTypes: true } },
  );
