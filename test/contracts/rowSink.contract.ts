import { describe, expect, it } from 'vitest';
import type { RowSink } from '../../sinks/clickhouse/rowSink.ts';

type Row = Record<string, unknown>;

/** What one contract test gets: a sink over a store it can read back, close and open again (a restart). */
export interface RowSinkUnderTest {
  /** A table of the backend, empty before each test (`fresh` is called first). */
  readonly table: string;
  /** Row `i` of a test: distinct for distinct `i`, the same for the same `i`. */
  row(i: number): Row;
  /** The `i` a row (as written, or as read back) was made from. */
  indexOf(row: Row): number;
  /** Empties the table. */
  fresh(): Promise<void>;
  /** Opens a sink; after `closeBackend()` it opens the backend again first. */
  open(opts: { maxRows: number; maxWaitMs: number; maxBufferedRows?: number }): Promise<RowSink<Row>>;
  /** The rows stored once each (the backend's idempotent view), sorted by `orderBy`. */
  readBack(): Promise<Row[]>;
  /** Closes the backend connection (the "process" stops); the next `open` reopens it. */
  closeBackend(): Promise<void>;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

/** The RowSink contract (STYLE §6): every sink adapter must pass it. `skip`: why it cannot run here (reported). */
export const rowSinkContract = (name: string, sut: RowSinkUnderTest, skip?: string): void => {
  describe.skipIf(skip !== undefined)(`RowSink: ${name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('stores a replayed batch once', async () => {
      await sut.fresh();
      const sink = await sut.open({ maxRows: 100, maxWaitMs: 50 });
      const rows = range(0, 250).map(sut.row);
      await sink.write(sut.table, rows);
      await sink.flush();
      const once = await sut.readBack();
      await sink.write(sut.table, rows);
      await sink.write(sut.table, [...rows].reverse().slice(0, 77));
      await sink.close();
      expect(once).toHaveLength(250);
      expect(await sut.readBack()).toEqual(once);
    });

    it('batches by time: a few rows are written within maxWaitMs without a flush', async () => {
      await sut.fresh();
      const sink = await sut.open({ maxRows: 10_000, maxWaitMs: 20 });
      await sink.write(sut.table, range(0, 3).map(sut.row));
      let seen: Row[] = [];
      for (let i = 0; i < 100 && seen.length < 3; i++) {
        await new Promise((r) => setTimeout(r, 50));
        seen = await sut.readBack();
      }
      await sink.close();
      expect(seen).toHaveLength(3);
    });

    it('loses nothing acknowledged when shut down mid-stream, and a restart sees every row', async () => {
      await sut.fresh();
      const sink = await sut.open({ maxRows: 1_000, maxWaitMs: 60_000, maxBufferedRows: 2_000 });
      // Writes are acknowledged (resolved) long before most rows are durable; close() must flush them all.
      const acknowledged: number[] = [];
      for (let i = 0; i < 2_500; i += 100) {
        await sink.write(sut.table, range(i, i + 100).map(sut.row));
        acknowledged.push(...range(i, i + 100));
      }
      await sink.close();
      await sut.closeBackend();
      const reopened = await sut.open({ maxRows: 1_000, maxWaitMs: 50 });
      const stored = await sut.readBack();
      await reopened.close();
      expect(stored).toHaveLength(acknowledged.length);
      expect(stored.map(sut.indexOf).sort((a, b) => a - b)).toEqual(acknowledged);
    });

    it('applies backpressure: write waits while the buffer is full, and nothing is lost', async () => {
      await sut.fresh();
      const sink = await sut.open({ maxRows: 100, maxWaitMs: 60_000, maxBufferedRows: 200 });
      await Promise.all(range(0, 10).map((b) => sink.write(sut.table, range(b * 100, b * 100 + 100).map(sut.row))));
      await sink.flush();
      expect(await sut.readBack()).toHaveLength(1_000);
      await sink.close();
    });

    it('refuses writes after close', async () => {
      await sut.fresh();
      const sink = await sut.open({ maxRows: 10, maxWaitMs: 10 });
      await sink.close();
      await expect(sink.write(sut.table, [sut.row(1)])).rejects.toThrow();
    });
  });
};
