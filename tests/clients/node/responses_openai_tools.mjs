// A tool the client declares and runs itself (`openai` TypeScript SDK, Responses API): the response
// ends with a `function_call` item; the client runs the function and continues the same run with
// `previous_response_id` and a `function_call_output`.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.KANAWA_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: process.env.KANAWA_API_KEY,
});

const tools = [
  {
    type: "function",
    name: "weather",
    description: "Today's weather in a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
    strict: true,
  },
];
const weather = ({ city }) => ({ city, sky: "sunny", celsius: 21 });

let response = await client.responses.create({
  model: "assistant", // your agent, on a model that calls tools
  input: "What is the weather in Tokyo?",
  tools,
});
for (;;) {
  const calls = response.output.filter((item) => item.type === "function_call");
  if (calls.length === 0) break;
  const outputs = calls.map((call) => {
    console.log(`called ${call.name}(${call.arguments})`);
    const result = weather(JSON.parse(call.arguments));
    return { type: "function_call_output", call_id: call.call_id, output: JSON.stringify(result) };
  });
  response = await client.responses.create({
    model: "assistant",
    previous_response_id: response.id,
    input: outputs,
    tools,
  });
}
console.log(response.output_text);
