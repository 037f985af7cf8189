// Row "loop" never yields (a runaway synchronous loop); row "wait" never resolves; row "infra" throws a 503; others answer.
export default async (input) => {
  if (input === 'loop') for (;;);
  if (input === 'wait') return new Promise(() => {});
  if (input === 'infra') throw Object.assign(new Error('upstream model unavailable'), { status: 503 });
  if (input === 'bug') throw new TypeError('cannot read properties of undefined');
  return input;
};
