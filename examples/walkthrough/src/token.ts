/**
 * Mints an HS256 token carrying svc-graphql session claims, for trying the server by hand:
 *
 *   pnpm token --key <HS256 secret> --role user [--roles user,editor] [--ttl 3600] [--var x-svc-user-id=42]
 */
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';

export interface TokenOptions {
  key: string;
  role: string;
  roles?: string[];
  ttlSeconds?: number;
  variables?: Record<string, string>;
  namespace?: string;
}

export async function mintToken(options: TokenOptions): Promise<string> {
  const claims: Record<string, unknown> = {
    'x-svc-default-role': options.role,
    'x-svc-allowed-roles': options.roles ?? [options.role],
    ...options.variables,
  };
  return new SignJWT({ [options.namespace ?? 'https://svc-graphql.dev/jwt/claims']: claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 3600}s`)
    .sign(new TextEncoder().encode(options.key));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      key: { type: 'string' },
      role: { type: 'string', default: 'user' },
      roles: { type: 'string' },
      ttl: { type: 'string', default: '3600' },
      var: { type: 'string', multiple: true },
    },
  });
  if (!values.key) throw new Error('--key: the HS256 secret of the server (the "key" of --jwt-secret) is required');
  // The server refuses a shorter HS256 key at start: a token signed with one could never be accepted.
  if ([...values.key].length < 32) throw new Error('--key: an HS256 key has at least 32 characters (the server refuses a shorter one)');
  const variables: Record<string, string> = {};
  for (const pair of values.var ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--var: expected name=value, but got "${pair}"`);
    variables[pair.slice(0, eq).toLowerCase()] = pair.slice(eq + 1);
  }
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error(`--ttl: expected a positive number of seconds, but got "${values.ttl}"`);
  const token = await mintToken({
    key: values.key,
    role: values.role,
    ttlSeconds: ttl,
    variables,
    ...(values.roles !== undefined && { roles: values.roles.split(',') }),
  });
  process.stdout.write(`${token}\n`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
