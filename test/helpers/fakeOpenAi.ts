import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible server for the instrumentation tests (no hosted model is ever called): `POST
 * /v1/chat/completions`. A request offering tools and holding no tool result yet is answered with one call of the
 * first tool (arguments `{"order": N}`, N the first number in the last user message); otherwise with the text
 * `Refunded order N.`. A user message containing `FAIL` gets a 500. Usage is 11 prompt and 7 completion tokens per
 * call; the answer's model is the request's with `-2024-08-06` appended (so request and response model differ).
 */
export interface FakeOpenAi {
  readonly url: string;
  readonly requests: unknown[];
  close(): Promise<void>;
}

interface Message {
  role: string;
  content?: unknown;
}

const textOf = (m: Message | undefined): string =>
  typeof m?.content === 'string'
    ? m.content
    : Array.isArray(m?.content)
      ? (m.content as { text?: string }[]).map((p) => p.text ?? '').join(' ')
      : '';

export const startFakeOpenAi = async (): Promise<FakeOpenAi> => {
  const requests: unknown[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions'))
        return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        messages: Message[];
        tools?: { function: { name: string } }[];
        stream?: boolean;
      };
      requests.push(body);
      const lastUser = textOf(body.messages.findLast((m) => m.role === 'user'));
      if (lastUser.includes('FAIL'))
        return send(500, { error: { message: 'the model is overloaded', type: 'server_error' } });
      const order = /\d+/.exec(lastUser)?.[0] ?? '0';
      const wantsTool = (body.tools?.length ?? 0) > 0 && !body.messages.some((m) => m.role === 'tool');
      const id = `chatcmpl-${++n}`;
      const message = wantsTool
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: `call_${n}`,
                type: 'function',
                function: { name: body.tools![0]!.function.name, arguments: JSON.stringify({ order: Number(order) }) },
              },
            ],
          }
        : { role: 'assistant', content: `Refunded order ${order}.` };
      send(200, {
        id,
        object: 'chat.completion',
        created: 1_767_225_600,
        model: `${body.model}-2024-08-06`,
        choices: [{ index: 0, message, finish_reason: wantsTool ? 'tool_calls' : 'stop', logprobs: null }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
