// The Vercel AI SDK (`ai` + `@ai-sdk/openai`) using a kanawa agent through Chat Completions.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";

const kanawa = createOpenAI({
  baseURL: process.env.KANAWA_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: process.env.KANAWA_API_KEY, // a kanawa API key: it decides the tenant
});

const { text } = await generateText({ model: kanawa.chat("calc"), prompt: "What is 2 + 3?" });
console.log(text);

const result = streamText({ model: kanawa.chat("calc"), prompt: "What is 6 * 7?" });
for await (const delta of result.textStream) process.stdout.write(delta);
console.log();
