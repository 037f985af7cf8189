import { readmeSuite } from './readmeCommands.ts';

// Every command of the README and of every --help example that needs no Kafka (test/readme/readmeCommands.ts).
await readmeSuite('local');
