// A tool the client runs itself: declared in the request body, called by the agent, answered by
// sending the chat again with the tool's output — the same run goes on.
// Usage: KANAWA_URL=http://127.0.0.1:8000 KANAWA_API_KEY=... node chat_tools.mjs <agent> "<question>"
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [agent = 'assistant', question = 'What is the weather in Kyoto?'] = process.argv.slice(2);
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
  body: { tools },
});
const chatId = crypto.randomUUID();
const messages = [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: question }] }];

// send the chat; the answer is a new assistant message, or goes on with the last one
async function send() {
  const stream = await transport.sendMessages({ chatId, messages, trigger: 'submit-message' });
  let message = messages.at(-1).role === 'assistant' ? messages.pop() : undefined;
  for await (const update of readUIMessageStream({ message, stream })) message = update;
  messages.push(message);
  return message;
}

let answer = await send();
for (const part of answer.parts) {
  if (part.type === 'tool-get_weather' && part.state === 'input-available') {
    console.log(`the agent asks for the weather in ${part.input.city}`);
    Object.assign(part, { state: 'output-available', output: `sunny, 21°C in ${part.input.city}` });
  }
}
answer = await send();
const text = answer.parts.filter((part) => part.type === 'text').map((part) => part.text);
console.log(text.at(-1));
