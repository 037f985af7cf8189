import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP server for a test; `url` is its root (no trailing slash). */
export interface StubServer {
  readonly url: string;
  readonly requests: () => number;
  close(): Promise<void>;
}

const serve = async (
  answer: (body: unknown, res: ServerResponse, req: IncomingMessage) => void,
): Promise<StubServer> => {
  let n = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      n++;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      answer(body, res, req);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => n,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
};

const json = (res: ServerResponse, value: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));

/**
 * A refund agent behind HTTP, as `passk run --agent http://…/agent` calls one (one POST of the trial request a trial):
 * approve within 30 days with a receipt, else deny (the policy of the README's `agent.py`).
 */
export const startRefundAgent = (): Promise<StubServer> =>
  serve((body, res) => {
    const input = ((body as { input?: unknown }).input ?? {}) as { days_since_purchase?: number; receipt?: string };
    const ok = (input.days_since_purchase ?? 99) <= 30 && input.receipt === 'yes';
    json(res, { output: ok ? 'approve' : 'deny' });
  });

/**
 * An OpenAI-compatible judge (`POST /v1/chat/completions`): a pass when the graded answer equals the expected one as
 * the judge prompt quotes them (`Answer to grade:` and `Reference answer:`), with the verdict in the JSON the LLM judge asks for.
 */
export const startJudge = (): Promise<StubServer> =>
  serve((body, res) => {
    const messages = (body as { messages?: { content?: string }[] }).messages ?? [];
    const text = messages.map((m) => m.content ?? '').join('\n');
    const answer = /Answer to grade:\n(\S+)/.exec(text)?.[1];
    const expected = /Reference answer:\n(\S+)/.exec(text)?.[1];
    const verdict = answer !== undefined && answer === expected ? 'pass' : 'fail';
    json(res, {
      choices: [
        {
          message: {
            role: 'assistant',
            content: JSON.stringify({ verdict, score: verdict === 'pass' ? 1 : 0, reason: 'stub' }),
          },
        },
      ],
    });
  });
