import { createChdbConnection } from 'chdb/connection';
try { createChdbConnection({ path: process.argv[2]! }); console.log('ok'); } catch (e) { const x = e as any; console.log(Object.getOwnPropertyNames(x), x.clickhouseCode, x.cause, x.stack); }
