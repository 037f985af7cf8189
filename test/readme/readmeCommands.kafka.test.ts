import { inject } from 'vitest';
import { readmeSuite } from './readmeCommands.ts';

// The README's and --help examples' commands that name a Kafka stack, run on this suite's (test/readme/readmeCommands.ts).
await readmeSuite('kafka', { brokers: inject('kafkaBrokers'), registry: inject('schemaRegistryUrl') });
