import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string;
    schemaRegistryUrl: string;
    stackKind: 'env' | 'testcontainers' | 'local';
  }
}
