import { rmSync } from 'node:fs';
import { sharedDemoDir } from '../browser/sharedDemo.ts';

/**
 * The browser project's global setup: nothing before the files run (the first file that needs the demo runs it,
 * test/browser/sharedDemo.ts); at the end, the run's shared demo directory goes.
 */
export default function setup(): () => void {
  return () => rmSync(sharedDemoDir(process.pid), { recursive: true, force: true });
}
