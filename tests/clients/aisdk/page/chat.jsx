// A minimal useChat page for a kanawa agent: streaming, a client-side tool, and resume after a
// reload. Open it as chat.html#agent=<agent>&key=<API key>, and add &server=<kanawa's address> when
// the page is served from another origin (one KANAWA_CORS_ORIGINS allows).
import { Chat, useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

const params = new URLSearchParams(location.hash.slice(1));
const agent = params.get('agent') ?? 'assistant';
const key = params.get('key') ?? '';
const server = params.get('server') ?? '';
// the chat's id and messages outlive a reload of the tab, so the page can resume its answer
const chatId = sessionStorage.getItem('chat-id') ?? crypto.randomUUID();
sessionStorage.setItem('chat-id', chatId);
const saved = JSON.parse(sessionStorage.getItem('chat-messages') ?? '[]');

// the tools this page runs itself: declared to the server in the request body
const tools = [
  {
    name: 'get_weather',
    description: 'The weather in a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

// the Chat is made here, with the transport itself, so that useChat's resume knows the transport
// replays an answer from its start (given as useChat's `transport`, that is lost in a wrapper)
const chat = new Chat({
  id: chatId,
  messages: saved,
  transport: new DefaultChatTransport({
    api: `${server}/ai-sdk/${agent}`,
    headers: { Authorization: `Bearer ${key}` },
    body: { tools },
  }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  onToolCall({ toolCall }) {
    if (toolCall.toolName === 'get_weather') {
      chat.addToolOutput({ tool: 'get_weather', toolCallId: toolCall.toolCallId, output: 'sunny, 21°C' });
    }
  },
});

function ChatPage() {
  const [input, setInput] = useState('');
  const { messages, sendMessage, status, error } = useChat({ chat, resume: true });
  useEffect(() => sessionStorage.setItem('chat-messages', JSON.stringify(messages)), [messages]);

  return (
    <main>
      {messages.map((message) => (
        <section key={message.id} className="message" data-role={message.role}>
          {message.parts.map((part, i) => {
            if (part.type === 'text') return <p key={i}>{part.text}</p>;
            if (part.type.startsWith('tool-')) {
              return <pre key={i} className="tool">{`${part.type.slice(5)}: ${part.state}`}</pre>;
            }
            return null;
          })}
        </section>
      ))}
      {error && <p className="error">{error.message}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input value={input} onChange={(event) => setInput(event.target.value)} placeholder="Ask…" />
        {/* busy while an answer is on its way; after an error, Send is there to try again */}
        <button type="submit" disabled={status === 'submitted' || status === 'streaming'}>Send</button>
      </form>
      <output id="status">{status}</output>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<ChatPage />);
