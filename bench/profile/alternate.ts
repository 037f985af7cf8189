import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

/**
 * Runs `tasks` in turn, `samples` rounds, and prints each one's median wall and CPU time of the process (chDB runs in
 * it) against the first task's CPU (the bare query), then the load average over the run.
 */
export const alternate = async (tasks: [string, () => Promise<unknown>][], samples: number): Promise<void> => {
  const wall = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const loads: number[] = [loadavg()[0]!];
  for (let i = 0; i < samples; i++)
    for (const [name, f] of tasks) {
      const t = performance.now();
      const u = process.cpuUsage();
      await f();
      const d = process.cpuUsage(u);
      (wall.get(name) ?? wall.set(name, []).get(name)!).push(performance.now() - t);
      (cpu.get(name) ?? cpu.set(name, []).get(name)!).push((d.user + d.system) / 1000);
      loads.push(loadavg()[0]!);
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const bare = median(cpu.get(tasks[0]![0])!);
  for (const [name] of tasks)
    console.log(
      `${name.padEnd(24)} wall median ${median(wall.get(name)!).toFixed(0)} ms, cpu median ${median(cpu.get(name)!).toFixed(0)} ms (${(median(cpu.get(name)!) / bare).toFixed(2)}× the bare query's)`,
    );
  console.log(`load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
};
