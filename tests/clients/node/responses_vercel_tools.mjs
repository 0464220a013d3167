// A tool the client declares and runs itself, offered to a kanawa agent beside the agent's own tools
// (Vercel AI SDK, Responses API): the agent calls it, the SDK runs `execute` here and sends the result
// back, and the agent answers from it.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";

const kanawa = createOpenAI({
  baseURL: process.env.KANAWA_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: process.env.KANAWA_API_KEY,
});

const weather = tool({
  description: "Today's weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, sky: "sunny", celsius: 21 }),
});

const { text, steps } = await generateText({
  model: kanawa.responses("assistant"), // your agent, on a model that calls tools
  tools: { weather },
  stopWhen: stepCountIs(3),
  prompt: "What is the weather in Tokyo?",
});
for (const step of steps) {
  for (const call of step.toolCalls) console.log(`called ${call.toolName}(${JSON.stringify(call.input)})`);
}
console.log(text);
