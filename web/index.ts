/** The reliability dashboard: server, data port and its adapters. */
export { createDashboardServer, type DashboardServer, type DashboardServerOptions } from './server.ts';
export { DashboardConfigError, isLoopback } from './auth.ts';
export type { DashboardData, RowDrillDown, Scope, VersionGroup, ProductionView, DatasetVersionView } from './data.ts';
export { createMemoryDashboardData } from './memoryData.ts';
export type { ConfirmAnswer, ConfirmBody } from './contract.ts';
