/**
 * The JavaScript stack of a running Node process, even one whose event loop is held by a busy loop (where no
 * signal handler of its own can run): SIGUSR1 starts its inspector on 127.0.0.1:9229, whose own thread answers,
 * and `Debugger.pause` interrupts the running code. Run in the process's network namespace:
 *   ip netns exec NS node --experimental-websocket --import tsx test/faults/jsStack.ts PID
 * Prints one `at function (url:line:column)` line per frame, then resumes it.
 */
const pid = Number(process.argv[2]);
if (!Number.isInteger(pid)) throw new Error('usage: jsStack.ts PID');
process.kill(pid, 'SIGUSR1');

interface Target {
  webSocketDebuggerUrl: string;
}
let targets: Target[] | undefined;
for (let i = 0; i < 50 && !targets; i++) {
  await new Promise((r) => setTimeout(r, 100));
  targets = await fetch('http://127.0.0.1:9229/json/list', { signal: AbortSignal.timeout(1_000) })
    .then((r) => r.json() as Promise<Target[]>)
    .catch(() => undefined);
}
if (!targets?.[0]) {
  process.stdout.write('jsStack: no inspector answered on 127.0.0.1:9229\n');
  process.exit(1);
}

interface Frame {
  functionName: string;
  location: { scriptId: string; lineNumber: number; columnNumber: number };
}
const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
const scripts = new Map<string, string>();
let id = 0;
const send = (method: string, params: object = {}) => ws.send(JSON.stringify({ id: ++id, method, params }));
let state = '';
const timer = setTimeout(() => {
  process.stdout.write(`jsStack: the process did not pause within 20 s\n${state}`);
  process.exit(1);
}, 20_000);
// What an idle process waits on, asked before pausing it: its SIGTERM listeners, a stop signal still held while it
// loads (bin/passk.mjs), and its active resources (timers, sockets, a loader's message port).
const STATE = `JSON.stringify({
  sigterm: process.listeners('SIGTERM').map((f) => String(f).slice(0, 100)),
  held: globalThis[Symbol.for('passk.earlySignals')]?.pending ?? null,
  loading: globalThis[Symbol.for('passk.earlySignals')] !== undefined,
  resources: process.getActiveResourcesInfo(),
})`;
ws.onopen = () => {
  send('Runtime.evaluate', { expression: STATE, returnByValue: true });
  send('Debugger.enable');
  send('Debugger.pause');
};
ws.onmessage = (m: MessageEvent) => {
  const msg = JSON.parse(String(m.data)) as {
    id?: number;
    method?: string;
    params?: Record<string, unknown>;
    result?: { result?: { value?: unknown } };
  };
  if (msg.id === 1) state = `state: ${String(msg.result?.result?.value)}\n`; // printed after the stack
  if (msg.method === 'Debugger.scriptParsed') {
    const p = msg.params as { scriptId: string; url: string };
    scripts.set(p.scriptId, p.url);
  }
  if (msg.method !== 'Debugger.paused') return;
  for (const f of (msg.params as { callFrames: Frame[] }).callFrames)
    process.stdout.write(
      `  at ${f.functionName || '(anonymous)'} (${scripts.get(f.location.scriptId) ?? '?'}:` +
        `${f.location.lineNumber + 1}:${f.location.columnNumber + 1})\n`,
    );
  process.stdout.write(state);
  clearTimeout(timer);
  send('Debugger.resume');
  setTimeout(() => process.exit(0), 100);
};
