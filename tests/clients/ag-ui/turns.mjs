// One thread, one question after another (not a documented example): each question is the next run
// of the same thread through the official client (`@ag-ui/client` HttpAgent), and each answer is
// printed on a line of its own.
// Usage: KANAWA_URL=... KANAWA_API_KEY=... node turns.mjs <agent> "<question>" "<question>"...
import { HttpAgent } from "@ag-ui/client";

const [name, ...questions] = process.argv.slice(2);
const agent = new HttpAgent({
  url: `${process.env.KANAWA_URL}/ag-ui/${name}`,
  headers: { Authorization: `Bearer ${process.env.KANAWA_API_KEY}` },
});
for (const question of questions) {
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: question });
  let answer = "";
  await agent.runAgent({}, { onTextMessageContentEvent: ({ event }) => void (answer += event.delta) });
  console.log(answer);
}
