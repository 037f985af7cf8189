import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
const q = async (c: any, s: string) => (await c.query({ query: s, format: 'JSONEachRow' })).json();
const a1 = createClient({ connection: createChdbConnection({ path: '/tmp/chx/A' }) });
await a1.command({ query: 'CREATE TABLE IF NOT EXISTS t (x UInt64) ENGINE=MergeTree ORDER BY x' });
const a2 = createClient({ connection: createChdbConnection({ path: '/tmp/chx/A' }) });
console.log('same path twice ok', await q(a2, 'SELECT count() FROM t'));
try { createChdbConnection({ path: '/tmp/chx/B' }); console.log('B while A open: ok'); } catch (e) { console.log('B while A open:', (e as any).code, (e as any).message); }
await a1.close(); await a2.close();
try { const b = createClient({ connection: createChdbConnection({ path: '/tmp/chx/B' }) }); console.log('B after A closed', await q(b, 'SELECT 1 x')); await b.close(); } catch (e) { console.log('B after close:', (e as any).code, (e as any).message); }
try { const a = createClient({ connection: createChdbConnection({ path: '/tmp/chx/A' }) }); console.log('A reopen', await q(a, 'SELECT count() FROM t')); await a.close(); } catch (e) { console.log('A reopen:', (e as any).code, (e as any).message); }
