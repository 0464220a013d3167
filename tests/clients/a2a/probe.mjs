// What tests/server/protocols/test_a2a_node.py checks, one JSON line per step: a stream cut after two
// pieces of the answer, then resubscribed (the test opens the agent's gate on "snapshot"), then a
// second task canceled, and another tenant's view of the first task.
import { Role } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";

const [url, question, otherKey] = process.argv.slice(2);

async function clientFor(key) {
  const withKey = (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: withKey })],
    }),
  );
  return factory.createFromUrl(`${url}/`);
}
const say = (step, data) => console.log(JSON.stringify({ step, ...data }));
const ask = (text, extra = {}) => ({
  message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }] },
  ...extra,
});
const textOf = (artifact) => artifact.parts.map((part) => part.content.value).join("");

const client = await clientFor(process.env.KANAWA_API_KEY);
let taskId;
let text = "";
let pieces = 0;
const controller = new AbortController();
try {
  for await (const event of client.sendMessageStream(ask(question), { signal: controller.signal })) {
    const { $case, value } = event.payload;
    if ($case === "task") taskId = value.id;
    if ($case === "artifactUpdate") {
      text = value.append ? text + textOf(value.artifact) : textOf(value.artifact);
      pieces += 1;
      if (pieces === 2) controller.abort(); // the connection is cut mid-answer
    }
  }
} catch (error) {
  if (error.name !== "AbortError") throw error;
}
say("cut", { taskId, text });

const kinds = [];
for await (const event of client.resubscribeTask({ id: taskId })) {
  const { $case, value } = event.payload;
  kinds.push($case);
  if ($case === "task") {
    text = value.artifacts.map(textOf).join("");
    say("snapshot", { state: value.status.state, text });
  }
  if ($case === "artifactUpdate") text = value.append ? text + textOf(value.artifact) : textOf(value.artifact);
  if ($case === "statusUpdate") say("status", { state: value.status.state });
}
say("resumed", { text, kinds });

const got = await client.getTask({ id: taskId });
say("got", { state: got.status.state, text: got.artifacts.map(textOf).join("") });

const other = await clientFor(otherKey);
try {
  await other.getTask({ id: taskId });
  say("other", { error: null });
} catch (error) {
  say("other", { error: error.constructor.name });
}
