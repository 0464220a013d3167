// What the tests look at beyond the documented scripts: every part or event a client saw, printed as
// one JSON object. Usage: node probe.mjs <case> <agent> <prompt>
//   vercel-responses-stream, vercel-chat-stream: streamText's full stream (Vercel AI SDK)
//   openai-responses-stream: responses.create({stream: true}) events (`openai` TypeScript SDK)
//   openai-chat-stream: chat.completions.create({stream: true}) chunks, with include_usage
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";
import OpenAI from "openai";

const [kind, agent, prompt] = process.argv.slice(2);
const baseURL = process.env.KANAWA_BASE_URL;
const apiKey = process.env.KANAWA_API_KEY;

async function vercelStream(api) {
  const kanawa = createOpenAI({ baseURL, apiKey });
  const errors = [];
  const result = streamText({
    model: api === "responses" ? kanawa.responses(agent) : kanawa.chat(agent),
    prompt,
    maxRetries: 0,
    onError: ({ error }) => errors.push(String(error?.message ?? error)),
  });
  const parts = [];
  for await (const part of result.fullStream) parts.push(part);
  return {
    types: parts.map((part) => part.type),
    deltas: parts.filter((part) => part.type === "text-delta").map((part) => part.text),
    text: await result.text,
    finishReason: await result.finishReason,
    usage: await result.usage,
    errors,
  };
}

async function openaiResponsesStream() {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const stream = await client.responses.create({ model: agent, input: prompt, stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  return { events };
}

async function openaiChatStream() {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model: agent,
    messages: [{ role: "user", content: prompt }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return { chunks };
}

const cases = {
  "vercel-responses-stream": () => vercelStream("responses"),
  "vercel-chat-stream": () => vercelStream("chat"),
  "openai-responses-stream": openaiResponsesStream,
  "openai-chat-stream": openaiChatStream,
};
if (!(kind in cases)) throw new Error(`unknown case ${kind}; one of ${Object.keys(cases).join(", ")}`);
console.log(JSON.stringify(await cases[kind]()));
