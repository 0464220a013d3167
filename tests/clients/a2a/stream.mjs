// Stream a kanawa agent's answer over A2A with the official JavaScript SDK, then read the task back.
// KANAWA_A2A_URL: the agent's A2A address (http://127.0.0.1:8000/a2a/<agent>); KANAWA_API_KEY: a key.
import { Role, TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";

const url = process.env.KANAWA_A2A_URL;
const key = process.env.KANAWA_API_KEY;

// every request carries the key (the card's too: with it the card has the agent's description and
// skills): it decides whose tasks these are
const withKey = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey }),
    transports: [new JsonRpcTransportFactory({ fetchImpl: withKey })],
  }),
);
const client = await factory.createFromUrl(`${url}/`); // reads <url>/.well-known/agent-card.json

const message = {
  messageId: crypto.randomUUID(),
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: process.argv[2] ?? "Hello!" } }],
};
let taskId;
for await (const event of client.sendMessageStream({ message })) {
  const { $case, value } = event.payload;
  if ($case === "task") taskId = value.id;
  if ($case === "artifactUpdate") {
    for (const part of value.artifact.parts) process.stdout.write(part.content.value);
  }
}
const task = await client.getTask({ id: taskId });
console.log(`\n${TaskState[task.status.state]}`);
