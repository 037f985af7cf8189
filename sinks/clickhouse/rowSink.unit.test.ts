import { ClickHouseError, type ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SinkRejected, SinkUnavailable } from './errors.ts';
import { createClickHouseRowSink } from './rowSink.ts';

/** A fake `exec` that records inserts and fails as told: the sink's logic without a store. */
const fakeClient = (fail: (table: string, rows: Record<string, unknown>[], call: number) => Error | undefined) => {
  const inserts: { table: string; rows: Record<string, unknown>[]; token: string }[] = [];
  let calls = 0;
  const exec = async (p: { query: string; values?: unknown; clickhouse_settings?: Record<string, unknown> }) => {
    const table = /INSERT INTO (\w+)/.exec(p.query)![1]!;
    let body = '';
    for await (const chunk of p.values as Readable) body += String(chunk);
    const rows = body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const error = fail(table, rows, calls++);
    if (error) throw error;
    inserts.push({ table, rows, token: String(p.clickhouse_settings?.insert_deduplication_token) });
    return { stream: Readable.from([]), query_id: 'q', response_headers: {}, http_status_code: 200 };
  };
  return { client: { exec } as unknown as Pick<ClickHouseClient, 'exec'>, inserts };
};
const noWait = { retries: 3, initialMs: 0, factor: 1, maxMs: 0 };
const ch = (type: string) => new ClickHouseError({ message: type, code: '1', type });
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ alert_id: `a${from + i}` }));

describe('createClickHouseRowSink', () => {
  it('batches by rows: one insert per maxRows, the rest on flush', async () => {
    const { client, inserts } = fakeClient(() => undefined);
    const sink = createClickHouseRowSink({ client, maxRows: 4, maxWaitMs: 60_000, retry: noWait });
    await sink.write('alerts', rows(10));
    await sink.flush();
    expect(inserts.map((i) => i.rows.length)).toEqual([4, 4, 2]);
    await sink.close();
  });

  it('retries transient failures (by error type, or an untyped network error) with the same dedup token', async () => {
    const { client, inserts } = fakeClient((_t, _r, call) =>
      call === 0 ? ch('TOO_MANY_PARTS') : call === 1 ? new Error('socket hang up') : undefined,
    );
    const sink = createClickHouseRowSink({ client, retry: noWait });
    await sink.write('alerts', rows(3));
    await sink.close();
    expect(inserts).toHaveLength(1);
    expect(sink.stats().retries).toBe(2);
  });

  it('splits a batch to find a row the store refuses, writes the rest, and dead-letters that row with the reason', async () => {
    const { client, inserts } = fakeClient((table, rs) =>
      table === 'alerts' && rs.some((r) => r.alert_id === 'a5') ? ch('CANNOT_PARSE_TEXT') : undefined,
    );
    const sink = createClickHouseRowSink({ client, retry: noWait });
    await sink.write('alerts', rows(8));
    await sink.close();
    const written = inserts
      .filter((i) => i.table === 'alerts')
      .flatMap((i) => i.rows.map((r) => r.alert_id))
      .sort();
    expect(written).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a6', 'a7']);
    const [letter] = inserts.filter((i) => i.table === 'dead_letters').flatMap((i) => i.rows);
    expect(letter).toMatchObject({
      id: 'alerts/a5',
      stage: 'sink',
      target_table: 'alerts',
      reason: 'CANNOT_PARSE_TEXT: CANNOT_PARSE_TEXT',
    });
    expect(JSON.parse(Buffer.from(String(letter!.value_base64), 'base64').toString())).toEqual({ alert_id: 'a5' });
  });

  it('splits a batch that is too large', async () => {
    const { client, inserts } = fakeClient((_t, rs) => (rs.length > 2 ? ch('MEMORY_LIMIT_EXCEEDED') : undefined));
    const sink = createClickHouseRowSink({ client, retry: noWait });
    await sink.write('alerts', rows(7));
    await sink.close();
    expect(inserts.flatMap((i) => i.rows)).toHaveLength(7);
    expect(Math.max(...inserts.map((i) => i.rows.length))).toBeLessThanOrEqual(2);
  });

  it('never drops rows: a refusal that is not about rows stops the sink, keeps the rows, and a later flush writes them', async () => {
    let broken = true;
    const { client, inserts } = fakeClient(() => (broken ? ch('UNKNOWN_TABLE') : undefined));
    const sink = createClickHouseRowSink({ client, retry: noWait, maxWaitMs: 60_000 });
    await sink.write('alerts', rows(5));
    await expect(sink.flush()).rejects.toBeInstanceOf(SinkRejected);
    await expect(sink.write('alerts', rows(1, 5))).rejects.toBeInstanceOf(SinkRejected);
    broken = false;
    await sink.flush();
    expect(inserts.flatMap((i) => i.rows.map((r) => r.alert_id))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    await sink.close();
  });

  it('gives up after the retries with SinkUnavailable, keeping the rows', async () => {
    let down = true;
    const { client, inserts } = fakeClient(() => (down ? ch('NETWORK_ERROR') : undefined));
    const sink = createClickHouseRowSink({ client, retry: { ...noWait, retries: 2 } });
    await sink.write('alerts', rows(2));
    await expect(sink.flush()).rejects.toBeInstanceOf(SinkUnavailable);
    down = false;
    await sink.close();
    expect(inserts.flatMap((i) => i.rows)).toHaveLength(2);
  });

  it('checks its settings and table names', () => {
    const { client } = fakeClient(() => undefined);
    expect(() => createClickHouseRowSink({ client, maxRows: 0 })).toThrow(RangeError);
    expect(() => createClickHouseRowSink({ client, maxRows: 10, maxBufferedRows: 5 })).toThrow(RangeError);
    return expect(createClickHouseRowSink({ client }).write('nope', [{}])).rejects.toThrow('unknown table: nope');
  });
});
