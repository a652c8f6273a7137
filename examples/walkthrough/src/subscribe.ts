/**
 * Runs one GraphQL operation over graphql-ws and prints every result as a JSON line:
 *
 *   pnpm subscribe --url ws://127.0.0.1:8080/v1/graphql --token $TOKEN 'subscription { countdown(from: 3) }'
 */
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string', default: 'ws://127.0.0.1:8080/v1/graphql' },
      token: { type: 'string' },
      'admin-secret': { type: 'string' },
      variables: { type: 'string' },
    },
  });
  const query = positionals[0];
  if (!query) throw new Error('give the operation as the last argument');
  const headers: Record<string, string> = {};
  if (values.token) headers['Authorization'] = `Bearer ${values.token}`;
  if (values['admin-secret']) headers['X-Svc-Admin-Secret'] = values['admin-secret'];
  const client = createClient({ url: values.url, webSocketImpl: WebSocket, connectionParams: { headers }, retryAttempts: 0 });
  try {
    const operation = client.iterate({
      query,
      ...(values.variables !== undefined && { variables: JSON.parse(values.variables) as Record<string, unknown> }),
    });
    for await (const result of operation) process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await client.dispose();
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof Error ? error.message : typeof error === 'object' && error && 'reason' in error ? `closed: ${String((error as { code?: unknown }).code)} ${String(error.reason)}` : JSON.stringify(error);
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
