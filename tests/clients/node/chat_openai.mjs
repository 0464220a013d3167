// The official `openai` TypeScript SDK using a kanawa agent through Chat Completions.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.KANAWA_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: process.env.KANAWA_API_KEY, // a kanawa API key: it decides the tenant
});

const completion = await client.chat.completions.create({
  model: "calc",
  messages: [{ role: "user", content: "What is 2 + 3?" }],
});
console.log(completion.choices[0].message.content);

const stream = await client.chat.completions.create({
  model: "calc",
  messages: [{ role: "user", content: "What is 6 * 7?" }],
  stream: true,
  stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  process.stdout.write(chunk.choices[0]?.delta?.content ?? "");
  if (chunk.usage) console.log(`\n(${chunk.usage.total_tokens} tokens)`);
}
