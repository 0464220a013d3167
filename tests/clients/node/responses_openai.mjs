// The official `openai` TypeScript SDK using a kanawa agent through the Responses API.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.KANAWA_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: process.env.KANAWA_API_KEY, // a kanawa API key: it decides the tenant
});

const response = await client.responses.create({ model: "calc", input: "What is 2 + 3?" });
console.log(response.output_text);

const stream = await client.responses.create({ model: "calc", input: "What is 6 * 7?", stream: true });
for await (const event of stream) {
  if (event.type === "response.output_text.delta") process.stdout.write(event.delta);
  if (event.type === "response.completed") console.log(`\n(${event.response.usage.total_tokens} tokens)`);
}
