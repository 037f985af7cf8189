export * from './codec.ts';
export * from './envelope.ts';
export * from './errors.ts';
export * from './events/index.ts';
export * from './ids.ts';
export * from './jsonSchema.ts';
export * from './topics.ts';
export * from './trialFile.ts';
