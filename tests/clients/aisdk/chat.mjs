// Ask a kanawa agent one question through the AI SDK's DefaultChatTransport and print the answer.
// Usage: KANAWA_URL=http://127.0.0.1:8000 KANAWA_API_KEY=... node chat.mjs <agent> "<question>"
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [agent = 'assistant', question = 'Hello!'] = process.argv.slice(2);
const transport = new DefaultChatTransport({
  api: `${process.env.KANAWA_URL}/ai-sdk/${agent}`,
  headers: { Authorization: `Bearer ${process.env.KANAWA_API_KEY}` },
});
const messages = [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: question }] }];
const stream = await transport.sendMessages({
  chatId: crypto.randomUUID(),
  messages,
  trigger: 'submit-message',
});
let answer;
for await (const message of readUIMessageStream({ stream })) answer = message;
console.log(answer.parts.filter((part) => part.type === 'text').map((part) => part.text).join(''));
