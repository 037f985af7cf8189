/**
 * The campaign's journal: one JSON line per finished schedule (`npm run faults -- --journal FILE`), so a long
 * campaign can be stopped and resumed (`--resume` skips the seeds already in it), and its table printed from the
 * file alone (`--report FILE`, no cluster, no root).
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';

export const JournalEntry = z.object({
  seed: z.number().int().nonnegative(),
  tempo: z.enum(['normal', 'fast']),
  /** The faults applied, as printed (`loss-broker-1(26)`). */
  faults: z.array(z.string()),
  acked: z.number().int().nonnegative(),
  lost: z.number().int().nonnegative(),
  dup: z.number().int().nonnegative(),
  /** Divergent states, gate decisions, valid dead letters and a missing catch-up included (as the summary counts). */
  div: z.number().int().nonnegative(),
  /** Heal → caught up, ms; null when the processor did not catch up. */
  recoveryMs: z.number().nonnegative().nullable(),
  /** Acknowledged events a first read missed and a second read had. */
  misread: z.number().int().nonnegative(),
  /** Groups left behind. */
  groups: z.number().int().nonnegative(),
  /** The schedule's wall time, ms. */
  ms: z.number().nonnegative(),
  /** When it finished (ISO 8601). */
  at: z.string(),
  /** Unasked processor exits (each restarted). */
  exits: z.number().int().nonnegative().default(0),
  /** 'clean', or how the processor stopped on SIGTERM. */
  stop: z.string().default('clean'),
  /** Set when the schedule did not recover within its bounds (the runner's error). */
  error: z.string().optional(),
});
export type JournalEntry = z.infer<typeof JournalEntry>;

/** A schedule that failed: anything lost, duplicated or divergent, a group left behind, or no recovery. */
export const failed = (e: JournalEntry) => e.lost + e.dup + e.div + e.groups > 0 || e.error !== undefined;

/** The entries of a journal's text; a bad line is an error naming the file, the line and the field. */
export const parseJournal = (text: string, file: string): JournalEntry[] =>
  text.split('\n').flatMap((raw, i) => {
    if (raw.trim() === '') return [];
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new InputError(`not valid JSON (${(e as Error).message})`, { file, line: i + 1 });
    }
    const r = JournalEntry.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw new InputError(issue.message, { file, line: i + 1, field: issue.path.map(String).join('.') || '(line)' });
    }
    return [r.data];
  });

/** A journal's entries; none when the file does not exist yet. */
export const readJournal = (file: string): JournalEntry[] =>
  existsSync(file) ? parseJournal(readFileSync(file, 'utf8'), file) : [];

export const appendJournal = (file: string, e: JournalEntry) => appendFileSync(file, JSON.stringify(e) + '\n');

/** A fault's kind from its label: `loss-broker-1(26)` → `loss-broker`. */
export const kindOf = (label: string) => label.replace(/\(\d+\)$/, '').replace(/-\d$/, '');

/** The p-quantile (nearest rank) of `xs`, or undefined for none. */
export const quantile = (xs: readonly number[], p: number): number | undefined => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] : undefined;
};

/** Words joined into lines of at most `width` characters (CLI output fits 80 columns). */
export const wrap = (words: string[], width: number): string[] => {
  const lines: string[] = [];
  for (const w of words) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + w.length <= width) lines[lines.length - 1] = `${last} ${w}`;
    else lines.push(w);
  }
  return lines;
};

/**
 * The campaign's summary, from its entries: faults by kind, recovery p50/p95/max, schedule times, the seeds that
 * failed or misread, and last `faults: S schedules, B brokers, E acknowledged, L lost, D duplicated, V divergent`.
 * `runMs` (the whole run, cluster included) is printed when known.
 */
export const summarize = (entries: readonly JournalEntry[], o: { brokers: number; runMs?: number }): string[] => {
  const out: string[] = [];
  const byKind = new Map<string, number>();
  for (const e of entries) for (const f of e.faults) byKind.set(kindOf(f), (byKind.get(kindOf(f)) ?? 0) + 1);
  const kinds = [...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`);
  const faults = entries.reduce((n, e) => n + e.faults.length, 0);
  for (let i = 0; i < kinds.length; i += 3) out.push(`${i ? '  ' : 'by kind: '}${kinds.slice(i, i + 3).join(', ')}`);
  const recoveries = entries.flatMap((e) => (e.recoveryMs === null ? [] : [e.recoveryMs]));
  const s = (p: number) => {
    const q = quantile(recoveries, p);
    return q === undefined ? '-' : (q / 1000).toFixed(1);
  };
  out.push(`recovery s: p50 ${s(0.5)}, p95 ${s(0.95)}, max ${s(1)}; ${faults} faults`);
  const ms = entries.map((e) => e.ms);
  const mean = ms.length ? ms.reduce((a, b) => a + b, 0) / ms.length / 1000 : 0;
  out.push(
    `schedule s: mean ${mean.toFixed(1)}, max ${(Math.max(0, ...ms) / 1000).toFixed(1)}` +
      (o.runMs === undefined ? '' : `; run ${(o.runMs / 1000).toFixed(0)} s, cluster included`),
  );
  const misread = entries.filter((e) => e.misread > 0);
  if (misread.length)
    out.push(...wrap([`misread (${misread.length}):`, ...misread.map((e) => `${e.seed}(${e.misread})`)], 80));
  const bad = entries.filter(failed);
  if (bad.length) out.push(...wrap([`failed (${bad.length}):`, ...bad.map((e) => String(e.seed))], 80));
  const groups = entries.reduce((n, e) => n + e.groups, 0);
  if (groups > 0) out.push(`groups left behind: ${groups}`);
  const sum = (k: 'acked' | 'lost' | 'dup' | 'div') => entries.reduce((n, e) => n + e[k], 0);
  out.push(
    `faults: ${entries.length} schedules, ${o.brokers} brokers, ${sum('acked')} acknowledged, ` +
      `${sum('lost')} lost, ${sum('dup')} duplicated, ${sum('div')} divergent`,
  );
  return out;
};
