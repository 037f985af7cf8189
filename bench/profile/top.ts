/**
 * The top self-time functions of a V8 `.cpuprofile` (from `node --cpu-prof`), with each one's share
 * of the sampled time, and the time by package (node_modules/<pkg>, or our top folder):
 *   node --import tsx bench/profile/top.ts file.cpuprofile [n=25]
 * Given several profiles (a shell glob: `node --cpu-prof` writes one per thread), the main thread's is read: the one
 * with the most samples that are not idle; the count of functions, if given, is the argument that is a number.
 * Our TypeScript runs through tsx, which minifies each module onto one line and names no closures:
 * positions are mapped back through the source maps in tsx's cache (the newest entry per file) and
 * each function is shown as its original file:line and the start of that line.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

// a glob of a --cpu-prof dir gives every thread's profile: the second one used to be taken for the count, NaN, and
// the list of functions came out empty
const args = process.argv.slice(2);
const files = args.filter((a) => !/^\d+$/.test(a));
const n = args.find((a) => /^\d+$/.test(a)) ?? '25';
if (files.length === 0) throw new Error('usage: top.ts <file.cpuprofile>… [n]');
const profiles = files.map((f) => ({ f, p: JSON.parse(readFileSync(f, 'utf8')) as Profile }));
/** Samples not idle: tsx's loader thread is sampled as long as the main one, idle all along. */
const busy = (q: Profile): number => {
  const idle = new Set(q.nodes.filter((x) => x.callFrame.functionName === '(idle)').map((x) => x.id));
  return q.samples.filter((id) => !idle.has(id)).length;
};
const { f: file, p } = profiles.reduce((a, b) => (busy(b.p) > busy(a.p) ? b : a));
if (files.length > 1) process.stderr.write(`${files.length} profiles: reading ${file}, the busiest\n`);
/** The repository's root, as a file URL and a path with a trailing slash: our files are named relative to it. */
const ROOT = new URL('../../', import.meta.url).href;
const ROOT_PATH = fileURLToPath(ROOT);
const byId = new Map(p.nodes.map((x) => [x.id, x]));
const self = new Map<number, number>();
p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const where = (url: string): string => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  const ours = url.startsWith(ROOT) ? /^([^/]+)\//.exec(url.slice(ROOT.length)) : null;
  if (ours) return `passk ${ours[1]}/`;
  return url.startsWith('node:') ? 'node' : url === '' ? '(vm)' : url;
};
/** tsx's cache: `{ code, map }` JSON per transformed module, keyed by content hash. */
const maps = new Map<string, { map: SourceMap; mtime: number }>();
const cache = join(tmpdir(), `tsx-${userInfo().uid}`);
for (const name of (() => {
  try {
    return readdirSync(cache);
  } catch {
    return [];
  }
})()) {
  const path = join(cache, name);
  try {
    const entry = JSON.parse(readFileSync(path, 'utf8')) as { map?: SourceMapPayload };
    const source = entry.map?.sources[0];
    const mtime = statSync(path).mtimeMs;
    if (source && (maps.get(source)?.mtime ?? -1) < mtime) maps.set(source, { map: new SourceMap(entry.map!), mtime });
  } catch {
    // not a module entry
  }
}
const sourceLines = new Map<string, string[]>();
const original = (f: Node['callFrame']): string | undefined => {
  if (!f.url.startsWith('file://') || f.url.includes('node_modules')) return undefined;
  const path = fileURLToPath(f.url);
  const m = maps.get(path)?.map.findEntry(f.lineNumber, f.columnNumber);
  if (!m || !('originalLine' in m)) return undefined;
  const lines = sourceLines.get(path) ?? readFileSync(path, 'utf8').split('\n');
  sourceLines.set(path, lines);
  const text = (lines[m.originalLine] ?? '').trim().slice(0, 70);
  return `${path.replace(ROOT_PATH, '')}:${m.originalLine + 1}  ${text}`;
};
const fns = new Map<string, number>();
const pkgs = new Map<string, number>();
for (const [id, us] of self) {
  const f = byId.get(id)!.callFrame;
  const file = f.url.replace(/^.*\/(node_modules\/)?/, '');
  const name = original(f) ?? `${f.functionName || '(anonymous)'}  ${file}${f.url ? `:${f.lineNumber + 1}` : ''}`;
  fns.set(name, (fns.get(name) ?? 0) + us);
  const pkg = f.url ? where(f.url) : f.functionName;
  pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1)}%`.padStart(6);
const lines = [`sampled ${(total / 1e6).toFixed(1)} s`, '', 'self time by function:'];
for (const [name, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) lines.push(`${pct(us)}  ${name}`);
lines.push('', 'self time by package:');
for (const [pkg, us] of [...pkgs].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`${pct(us)}  ${pkg}`);
process.stdout.write(`${lines.join('\n')}\n`);
