// A tool the client declares and runs itself (`openai` TypeScript SDK, Chat Completions): the
// completion ends with `finish_reason: "tool_calls"`; the client runs the function and sends the
// conversation back with a `role: "tool"` message per call.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.KANAWA_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: process.env.KANAWA_API_KEY,
});

const tools = [
  {
    type: "function",
    function: {
      name: "weather",
      description: "Today's weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
const weather = ({ city }) => ({ city, sky: "sunny", celsius: 21 });

const messages = [{ role: "user", content: "What is the weather in Tokyo?" }];
for (;;) {
  const completion = await client.chat.completions.create({ model: "assistant", messages, tools });
  const choice = completion.choices[0];
  messages.push(choice.message);
  if (choice.finish_reason !== "tool_calls") break;
  for (const call of choice.message.tool_calls) {
    console.log(`called ${call.function.name}(${call.function.arguments})`);
    const result = weather(JSON.parse(call.function.arguments));
    messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
  }
}
console.log(messages.at(-1).content);
