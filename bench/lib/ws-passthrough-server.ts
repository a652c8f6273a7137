// Server module: the WebSocket floor of `pnpm bench subscriptions`, a bare pass-through without any
// GraphQL. Each client socket gets a socket of its own to the remote, and every message goes
// through as it is, both ways (no parsing, no session, no sharing): what any Node gateway that
// keeps a session per subscriber upstream has to pay per event at least (a read, a write).
import type { IncomingMessage } from 'node:http';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import type { StartedServer } from './child-protocol.js';

export interface WsPassthroughOptions {
  /** The remote's WebSocket endpoint, e.g. ws://127.0.0.1:41234/graphql */
  readonly target: string;
}

const PROTOCOL = 'graphql-transport-ws';
/** graphql-ws messages are text frames; the bytes are passed on without being decoded. */
const TEXT = { binary: false } as const;

export async function start(raw: unknown): Promise<StartedServer> {
  const { target } = raw as WsPassthroughOptions;
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, handleProtocols: () => PROTOCOL });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (client: WebSocket, _request: IncomingMessage) => {
    const upstream = new WebSocket(target, PROTOCOL, { perMessageDeflate: false });
    // What the client sends before the remote has accepted the upstream socket.
    const early: RawData[] = [];
    client.on('message', (data: RawData) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, TEXT);
      else early.push(data);
    });
    upstream.on('open', () => {
      for (const data of early.splice(0)) upstream.send(data, TEXT);
    });
    upstream.on('message', (data: RawData) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, TEXT);
    });
    const closeBoth = () => {
      if (client.readyState === WebSocket.OPEN) client.close();
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
