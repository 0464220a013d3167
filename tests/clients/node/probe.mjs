// What the tests look at beyond the documented scripts: every part or event a client saw, printed as
// one JSON object. Usage: node probe.mjs <case> <agent> <prompt>
//   vercel-responses-stream, vercel-chat-stream: streamText's full stream (Vercel AI SDK)
//   openai-responses-stream: responses.create({stream: true}) events (`openai` TypeScript SDK)
//   openai-chat-stream: chat.completions.create({stream: true}) chunks, with include_usage
//   vercel-responses-tools, vercel-chat-tools: streamText with a client tool (`get_weather`, run here)
//   openai-responses-resume: a stream dropped after its first output item, resumed with
//     responses.retrieve(id, {stream: true, starting_after})
//   openai-errors: what the SDK raises for a model that does not exist, on both APIs
//   openai-tenants: a response created with KANAWA_API_KEY, asked for with the key OTHER_API_KEY
//     (another tenant's), beside a response id that does not exist
import { createOpenAI } from "@ai-sdk/openai";
import { stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { z } from "zod";

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

async function vercelTools(api) {
  const kanawa = createOpenAI({ baseURL, apiKey });
  const errors = [];
  const executed = [];
  const get_weather = tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      executed.push(city);
      return `sunny in ${city}`;
    },
  });
  const result = streamText({
    model: api === "responses" ? kanawa.responses(agent) : kanawa.chat(agent),
    prompt,
    tools: { get_weather },
    stopWhen: stepCountIs(4),
    maxRetries: 0,
    onError: ({ error }) => errors.push(String(error?.message ?? error)),
  });
  const parts = [];
  for await (const part of result.fullStream) parts.push(part);
  const steps = await result.steps;
  return {
    types: parts.map((part) => part.type),
    calls: parts
      .filter((part) => part.type === "tool-call")
      .map((part) => ({ name: part.toolName, input: part.input, providerExecuted: !!part.providerExecuted })),
    executed,
    steps: steps.length,
    responseIds: steps.map((step) => step.response.id),
    text: await result.text,
    finishReason: await result.finishReason,
    errors,
  };
}

async function openaiResponsesResume() {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const first = [];
  const stream = await client.responses.create({ model: agent, input: prompt, stream: true });
  for await (const event of stream) {
    first.push(event);
    if (event.type === "response.output_item.added") break; // leaving the loop drops the connection
  }
  const id = first[0].response.id;
  const after = first.at(-1).sequence_number;
  const rest = [];
  const resumed = await client.responses.retrieve(id, { stream: true, starting_after: after });
  for await (const event of resumed) rest.push(event);
  return { id, first, rest };
}

async function openaiErrors() {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const seen = {};
  const calls = {
    responses: () => client.responses.create({ model: agent, input: prompt }),
    chat: () => client.chat.completions.create({ model: agent, messages: [{ role: "user", content: prompt }] }),
    retrieve: () => client.responses.retrieve("resp_00000000000000000000000000000000"),
  };
  for (const [name, call] of Object.entries(calls)) {
    try {
      await call();
      seen[name] = { raised: false };
    } catch (error) {
      seen[name] = { raised: error.constructor.name, status: error.status, code: error.code, type: error.type };
    }
  }
  return seen;
}

async function openaiTenants() {
  const owner = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const other = new OpenAI({ baseURL, apiKey: process.env.OTHER_API_KEY, maxRetries: 0 });
  const created = await owner.responses.create({ model: agent, input: prompt });
  const missing = created.id.replace(/[0-9a-f]{8}$/, "00000000");
  const seen = { owner: (await owner.responses.retrieve(created.id)).output_text };
  for (const [name, call] of Object.entries({
    other: () => other.responses.retrieve(created.id),
    otherCancel: () => other.responses.cancel(created.id),
    missing: () => other.responses.retrieve(missing),
  })) {
    try {
      await call();
      seen[name] = { raised: false };
    } catch (error) {
      seen[name] = { raised: error.constructor.name, status: error.status, error: error.error };
    }
  }
  return seen;
}

const cases = {
  "vercel-responses-stream": () => vercelStream("responses"),
  "vercel-chat-stream": () => vercelStream("chat"),
  "openai-responses-stream": openaiResponsesStream,
  "openai-chat-stream": openaiChatStream,
  "vercel-responses-tools": () => vercelTools("responses"),
  "vercel-chat-tools": () => vercelTools("chat"),
  "openai-responses-resume": openaiResponsesResume,
  "openai-errors": openaiErrors,
  "openai-tenants": openaiTenants,
};
if (!(kind in cases)) throw new Error(`unknown case ${kind}; one of ${Object.keys(cases).join(", ")}`);
console.log(JSON.stringify(await cases[kind]()));
