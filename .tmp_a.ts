import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
const path = process.argv[2]!;
const t0 = Date.now();
try {
  const conn = createChdbConnection({ path });
  const client = createClient({ connection: conn });
  console.log('opened', Date.now()-t0);
  const r = await client.query({ query: "SELECT name, value FROM system.settings WHERE name IN ('output_format_json_quote_64bit_integers','date_time_input_format','insert_deduplicate','async_insert','date_time_output_format','output_format_json_quote_decimals','input_format_skip_unknown_fields','session_timezone','mutations_sync','max_insert_block_size','input_format_import_nested_json','output_format_json_quote_64bit_floats','insert_deduplication_token','final','do_not_merge_across_partitions_select_final','allow_experimental_json_type','enable_json_type','join_use_nulls','timezone')", format: 'JSONEachRow' });
  console.log(await r.json());
  const v = await client.query({ query: 'SELECT version() v, timezone() tz', format: 'JSONEachRow' }); console.log(await v.json());
  if (process.argv[3]) { await new Promise(r => setTimeout(r, Number(process.argv[3]))); }
  await client.close();
} catch (e) { const x = e as any; console.log('ERR', x?.constructor?.name, x.code, x.type, x.message, x.cause?.constructor?.name, x.cause?.code); }
