export * from './publish.ts';
