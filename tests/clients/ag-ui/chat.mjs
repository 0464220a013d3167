// A kanawa agent driven by the official AG-UI client (`@ag-ui/client` HttpAgent): the answer streams
// in, the agent's own tool calls show with their results, and a tool the frontend declares is run here
// when the agent calls it — its result goes back in the next run of the same thread.
import { HttpAgent } from "@ag-ui/client";

const base = process.env.KANAWA_URL ?? "http://127.0.0.1:8000";
const agent = new HttpAgent({
  url: `${base}/ag-ui/helper`,
  headers: { Authorization: `Bearer ${process.env.KANAWA_API_KEY}` },
});

const tools = [
  {
    name: "set_theme",
    description: "Change the page's background colour.",
    parameters: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
  },
];
const frontend = { set_theme: ({ color }) => `the page is now ${color}` };

const subscriber = {
  onTextMessageContentEvent: ({ event }) => void process.stdout.write(event.delta),
  onTextMessageEndEvent: () => void process.stdout.write("\n"),
  onToolCallEndEvent: ({ toolCallName, toolCallArgs }) =>
    console.log(`called ${toolCallName}(${JSON.stringify(toolCallArgs)})`),
  onToolCallResultEvent: ({ event }) => console.log(`result ${event.content}`),
};

agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "What is the weather in Tokyo?" });
for (;;) {
  await agent.runAgent({ tools }, subscriber);
  const answered = new Set(agent.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  const calls = agent.messages
    .flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []))
    .filter((call) => !answered.has(call.id) && frontend[call.function.name]);
  if (calls.length === 0) break;
  for (const call of calls) {
    const content = frontend[call.function.name](JSON.parse(call.function.arguments));
    console.log(`ran ${call.function.name}: ${content}`);
    agent.addMessage({ id: crypto.randomUUID(), role: "tool", toolCallId: call.id, content });
  }
}
