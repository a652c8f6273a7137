import { describe, expect, it } from 'vitest';
import { ConfigError, parseCommandLine, type ServeConfig } from '../src/cli/command-line.js';
import { DEFAULT_DATABASE_URL } from '../src/store.js';

function serve(argv: string[], env: NodeJS.ProcessEnv = {}): ServeConfig {
  const parsed = parseCommandLine(argv, env);
  if (parsed.command !== 'serve') throw new Error(`expected serve, got ${parsed.command}`);
  return parsed.config;
}

function configError(argv: string[], env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseCommandLine', () => {
  it('counts an empty variable as not set, except a secret, which is refused as empty', () => {
    expect(serve(['serve'], { SVC_GRAPHQL_SERVER_PORT: '', SVC_GRAPHQL_UNAUTHORIZED_ROLE: '' }).port).toBe(8080);
    for (const variable of ['SVC_GRAPHQL_ADMIN_SECRET', 'SVC_GRAPHQL_METRICS_SECRET']) {
      const error = configError(['serve'], { [variable]: '' });
      expect({ setting: error.setting, message: error.message }).toEqual({ setting: variable, message: 'must not be empty' });
    }
    // The flag still wins over the variable.
    expect(serve(['serve', '--admin-secret', 'given'], { SVC_GRAPHQL_ADMIN_SECRET: '' }).adminSecret).toBe('given');
  });

  it('uses the documented defaults when nothing is set', () => {
    const config = serve(['serve']);
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: DEFAULT_DATABASE_URL,
      enableRemoteSchemaPermissions: false,
      logLevel: 'info',
      maxRequestBodySize: 2097152,
      maxQueryTokens: 15000,
      maxRemoteResponseSize: 67108864,
      corsDomain: '*',
      disableCors: false,
      wsReadCookie: false,
    });
    expect(config.adminSecret).toBeUndefined();
    expect(config.jwtSecret).toBeUndefined();
    expect(config.unauthorizedRole).toBeUndefined();
  });

  it('reads every setting from its environment variable', () => {
    const config = serve(['serve'], {
      SVC_GRAPHQL_SERVER_HOST: '0.0.0.0',
      SVC_GRAPHQL_SERVER_PORT: '0',
      SVC_GRAPHQL_DATABASE_URL: 'postgres://u@h/db',
      SVC_GRAPHQL_ADMIN_SECRET: 's3cret',
      SVC_GRAPHQL_JWT_SECRET: '{"type":"HS256","key":"k"}',
      SVC_GRAPHQL_UNAUTHORIZED_ROLE: 'anonymous',
      SVC_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS: 'true',
      SVC_GRAPHQL_LOG_LEVEL: 'debug',
      SVC_GRAPHQL_MAX_REQUEST_BODY_SIZE: '1000',
      SVC_GRAPHQL_MAX_QUERY_TOKENS: '200',
      SVC_GRAPHQL_MAX_REMOTE_RESPONSE_SIZE: '3000',
      SVC_GRAPHQL_CORS_DOMAIN: 'https://a.example.com,https://*.b.example.com:8443',
      SVC_GRAPHQL_DISABLE_CORS: 'true',
      SVC_GRAPHQL_WS_READ_COOKIE: 'true',
    });
    expect(config).toMatchObject({
      maxRequestBodySize: 1000,
      maxQueryTokens: 200,
      maxRemoteResponseSize: 3000,
      corsDomain: 'https://a.example.com,https://*.b.example.com:8443',
      disableCors: true,
      wsReadCookie: true,
      host: '0.0.0.0',
      port: 0,
      databaseUrl: 'postgres://u@h/db',
      adminSecret: 's3cret',
      jwtSecret: '{"type":"HS256","key":"k"}',
      unauthorizedRole: 'anonymous',
      enableRemoteSchemaPermissions: true,
      logLevel: 'debug',
    });
    expect(config.sources.port).toBe('SVC_GRAPHQL_SERVER_PORT');
  });

  it('lets the flag win over the environment variable', () => {
    const config = serve(['serve', '--server-port', '9000', '--log-level=warn'], {
      SVC_GRAPHQL_SERVER_PORT: '7000',
      SVC_GRAPHQL_LOG_LEVEL: 'debug',
    });
    expect(config.port).toBe(9000);
    expect(config.logLevel).toBe('warn');
    expect(config.sources.port).toBe('--server-port');
  });

  it('accepts --database-url before the serve command, as Hasura does', () => {
    expect(serve(['--database-url', 'file:/tmp/m.json', 'serve']).databaseUrl).toBe('file:/tmp/m.json');
  });

  it('takes a boolean flag with or without a value', () => {
    expect(serve(['serve', '--enable-remote-schema-permissions']).enableRemoteSchemaPermissions).toBe(true);
    expect(serve(['serve', '--enable-remote-schema-permissions', 'false']).enableRemoteSchemaPermissions).toBe(false);
    expect(serve(['serve', '--enable-remote-schema-permissions=true']).enableRemoteSchemaPermissions).toBe(true);
  });

  it('ignores a bare -- that pnpm may pass on', () => {
    expect(serve(['serve', '--', '--server-port', '1234']).port).toBe(1234);
  });

  it('answers help and version', () => {
    expect(parseCommandLine(['--help']).command).toBe('help');
    expect(parseCommandLine(['version']).command).toBe('version');
  });

  it.each([
    [['serve', '--no-such-flag'], {}, '--no-such-flag', 'unknown flag'],
    [['serve', '--server-port', 'eighty'], {}, '--server-port', 'expected a port number between 0 and 65535, but got "eighty"'],
    [['serve'], { SVC_GRAPHQL_SERVER_PORT: '70000' }, 'SVC_GRAPHQL_SERVER_PORT', 'expected a port number between 0 and 65535, but got "70000"'],
    [['serve', '--database-url', 'mysql://x'], {}, '--database-url', 'expected file:PATH, postgres://… or postgresql://…, but got "mysql://x"'],
    [['serve'], { SVC_GRAPHQL_LOG_LEVEL: 'loud' }, 'SVC_GRAPHQL_LOG_LEVEL', 'expected one of error, warn, info, debug, but got "loud"'],
    [['serve'], { SVC_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS: 'yes' }, 'SVC_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS', 'expected "true" or "false", but got "yes"'],
    [['serve', '--admin-secret'], {}, '--admin-secret', 'expects a value'],
    [['serve', '--max-request-body-size', '0'], {}, '--max-request-body-size', 'expected a positive whole number, but got "0"'],
    [['serve'], { SVC_GRAPHQL_MAX_QUERY_TOKENS: '1e4' }, 'SVC_GRAPHQL_MAX_QUERY_TOKENS', 'expected a positive whole number, but got "1e4"'],
    [['serve', '--max-remote-response-size=-5'], {}, '--max-remote-response-size', 'expected a positive whole number, but got "-5"'],
    [['serve'], { SVC_GRAPHQL_DISABLE_CORS: '1' }, 'SVC_GRAPHQL_DISABLE_CORS', 'expected "true" or "false", but got "1"'],
    [
      ['serve', '--cors-domain', 'app.example.com'],
      {},
      '--cors-domain',
      '"app.example.com" is not an origin like https://app.example.com or https://*.example.com:8443',
    ],
    [['serve', '--cors-domain', '*,https://a.example.com'], {}, '--cors-domain', '"*" cannot be combined with other origins'],
    [[], {}, 'serve', 'missing command; run `svc-graphql serve`'],
    [['start'], {}, 'start', 'unknown command (expected "serve" or "import-hasura-metadata")'],
    [
      ['serve'],
      { SVC_GRAPHQL_JWT_SECRET: '{"type":"HS256","key":"0123456789abcdef0123456789abcdef"}' },
      'SVC_GRAPHQL_JWT_SECRET',
      'JWT mode needs an admin secret: set --admin-secret or SVC_GRAPHQL_ADMIN_SECRET',
    ],
  ] as const)('refuses %j %j naming %s', (argv, env, setting, message) => {
    const error = configError([...argv], env);
    expect(error.setting).toBe(setting);
    expect(error.message).toBe(message);
  });

  it('hides the password of a database URL it refuses', () => {
    const error = configError(['serve', '--database-url', 'mysql://user:hunter2@db/x']);
    expect(error.message).not.toContain('hunter2');
    expect(error.message).toContain('mysql://user:***@db/x');
  });
});
