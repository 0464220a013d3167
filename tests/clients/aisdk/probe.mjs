// What the tests look at finely, one JSON line per phase (not a documented example).
//   stream <agent> <chatId> <text> [tools]   every UI message chunk of one answer, and the message
//   cut <agent> <chatId> <text>              read until the gated `hold` tool is called (it waits), drop the
//                                            connection; reconnect (prints {"phase":"reconnected"} on
//                                            its first chunk) and read the replayed answer to its end
//   resume <agent> <chatId>                  reconnectToStream alone: null (204) or the chunks
//   error <agent> <chatId> <text>            what the transport throws
//   turns <agent> <chatId> <text> <text>...  one question after another in the same chat, each sent with
//                                            the chat's messages so far (as useChat does): the answers
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [mode, agent, chatId, text, withTools] = process.argv.slice(2);
const tools = [
  {
    name: 'get_weather',
    description: 'The weather in a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const transport = new DefaultChatTransport({
  api: `${process.env.KANAWA_URL}/ai-sdk/${agent}`,
  headers: { Authorization: `Bearer ${process.env.KANAWA_API_KEY}` },
  body: withTools ? { tools } : {},
});
const messages = [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: text ?? 'hi' }] }];
const say = (line) => console.log(JSON.stringify(line));

async function collect(stream, { until } = {}) {
  const [forChunks, forMessage] = stream.tee();
  const chunks = [];
  const reader = forChunks.getReader();
  let message;
  let failure;
  const reading = (async () => {
    for await (const update of readUIMessageStream({ stream: forMessage })) message = update;
  })().catch((error) => {
    failure = String(error);
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    if (until?.(value, chunks)) return { chunks, reader };
  }
  await reading;
  return { chunks, message, failure };
}

if (mode === 'stream') {
  const stream = await transport.sendMessages({ chatId, messages, trigger: 'submit-message' });
  say(await collect(stream));
} else if (mode === 'cut') {
  const connection = new AbortController();
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: 'submit-message',
    abortSignal: connection.signal,
  });
  const first = await collect(stream, {
    until: (chunk) => chunk.type === 'tool-input-start' && chunk.toolName === 'hold',
  });
  connection.abort();
  await first.reader.cancel().catch(() => {});
  say({ phase: 'cut', chunks: first.chunks });
  const resumed = await transport.reconnectToStream({ chatId });
  const [announce, rest] = resumed.tee();
  const head = announce.getReader();
  await head.read();
  say({ phase: 'reconnected' });
  head.cancel().catch(() => {});
  say({ phase: 'done', ...(await collect(rest)) });
} else if (mode === 'resume') {
  const stream = await transport.reconnectToStream({ chatId });
  say(stream === null ? { resumed: null } : await collect(stream));
} else if (mode === 'error') {
  try {
    await transport.sendMessages({ chatId, messages, trigger: 'submit-message' });
    say({ error: null });
  } catch (error) {
    say({ error: String(error.message) });
  }
} else if (mode === 'turns') {
  const questions = process.argv.slice(5);
  const chat = [];
  const answers = [];
  for (const [i, question] of questions.entries()) {
    chat.push({ id: `q${i + 1}`, role: 'user', parts: [{ type: 'text', text: question }] });
    const stream = await transport.sendMessages({ chatId, messages: chat, trigger: 'submit-message' });
    let answer;
    for await (const message of readUIMessageStream({ stream })) answer = message;
    chat.push(answer);
    answers.push(answer.parts.filter((part) => part.type === 'text').map((part) => part.text).join(''));
  }
  say({ answers });
}
