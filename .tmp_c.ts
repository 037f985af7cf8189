import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
const q = async (c: any, s: string, p?: any) => (await c.query({ query: s, format: 'JSONEachRow', query_params: p })).json();
const a1 = createClient({ connection: createChdbConnection({ path: '/tmp/chx/A' }), database: 'zz' });
await a1.command({ query: 'CREATE DATABASE IF NOT EXISTS zz' });
console.log(await q(a1, 'SELECT currentDatabase() d'));
await a1.command({ query: 'USE zz' });
console.log(await q(a1, 'SELECT currentDatabase() d'));
console.log(await q(a1, 'SELECT currentDatabase() d, {x:UInt8} x', {x: 3}));
try { await a1.command({ query: 'CREATE TABLE IF NOT EXISTS {db:Identifier}.tt (x UInt64) ENGINE=MergeTree ORDER BY x', query_params: {db: 'zz'} }); console.log('param ddl ok'); } catch (e) { console.log('param ddl', (e as any).message); }
console.log(await q(a1, 'SELECT database, name FROM system.tables WHERE database={d:String}', {d:'zz'}));
await a1.close();
