import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { JwtConfigError, parseJwtConfig } from '../src/index.js';
import { generateTestKeys, type TestKeyPair } from './utils/keys.js';

const HS256_KEY = 'k'.repeat(32);
let rsa: TestKeyPair;

beforeAll(() => {
  ({ rsa } = generateTestKeys(['rsa']));
});

function rejects(input: unknown, message: string): void {
  expect(() => parseJwtConfig(input)).toThrowError(new JwtConfigError(message));
  try {
    parseJwtConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(JwtConfigError);
    expect(error).toBeInstanceOf(TypeError);
  }
}

describe('parseJwtConfig', () => {
  it('accepts the minimal type + key config as an object or as JSON text, with its defaults', () => {
    for (const input of [{ type: 'HS256', key: HS256_KEY }, JSON.stringify({ type: 'HS256', key: HS256_KEY })]) {
      const config = parseJwtConfig(input);
      expect(config.keys).toMatchObject({ kind: 'key', type: 'HS256' });
      expect(config.claims).toEqual({ kind: 'namespace', namespace: 'https://svc-graphql.dev/jwt/claims', format: 'json' });
      expect(config.header).toEqual({ type: 'Authorization' });
      expect(config.allowedSkew).toBe(0);
      expect(config.audience).toBeUndefined();
      expect(config.issuer).toBeUndefined();
    }
  });

  it('never shows an HMAC secret when the parsed config is serialized', () => {
    const secret = 'a-secret-that-must-not-reach-any-log-line';
    expect(JSON.stringify(parseJwtConfig({ type: 'HS256', key: secret }))).not.toContain(secret);
  });

  it('returns an already parsed config unchanged', () => {
    const config = parseJwtConfig({ type: 'HS256', key: HS256_KEY });
    expect(parseJwtConfig(config)).toBe(config);
  });

  it('accepts jwk_url alone', () => {
    expect(parseJwtConfig({ jwk_url: 'https://idp.example/.well-known/jwks.json' }).keys).toMatchObject({ kind: 'jwks' });
  });

  it('rejects unknown fields so a misspelt check is never skipped', () => {
    rejects({ type: 'HS256', key: HS256_KEY, audiance: 'x' }, 'unknown field "audiance"');
  });

  it('rejects invalid JSON text and non-objects', () => {
    expect(() => parseJwtConfig('{"type":')).toThrowError(/^invalid JSON: /);
    rejects('[]', 'expected a JSON object, got a list');
    rejects(42, 'expected a JSON object, got a number');
  });

  it('needs type and key together, or jwk_url, but not both', () => {
    rejects({}, 'either type and key, or jwk_url, must be set');
    rejects({ type: 'HS256' }, 'key: required with type');
    rejects({ key: HS256_KEY }, 'type: required with key');
    rejects({ type: 'HS256', key: HS256_KEY, jwk_url: 'https://x/jwks' }, 'key and jwk_url both cannot be set');
    rejects({ type: 'RS256', jwk_url: 'https://x/jwks' }, 'type: must not be set with jwk_url (the keys carry their algorithm)');
    rejects({ jwk_url: 'not a url' }, 'jwk_url: invalid URL "not a url"');
    rejects({ jwk_url: 'ftp://x/jwks' }, 'jwk_url: expected an http(s) URL, got "ftp://x/jwks"');
  });

  it('accepts exactly the ten algorithms', () => {
    rejects(
      { type: 'PS256', key: HS256_KEY },
      'type: unsupported algorithm "PS256"; expected one of HS256, HS384, HS512, RS256, RS384, RS512, ES256, ES384, ES512, Ed25519',
    );
    expect(() => parseJwtConfig({ type: 'none', key: HS256_KEY })).toThrowError(/^type: unsupported algorithm "none"/);
  });

  it('requires HMAC keys of 32, 48 and 64 characters', () => {
    rejects({ type: 'HS256', key: 'k'.repeat(31) }, 'key: HS256 key must be at least 32 characters');
    rejects({ type: 'HS384', key: 'k'.repeat(47) }, 'key: HS384 key must be at least 48 characters');
    rejects({ type: 'HS512', key: 'k'.repeat(63) }, 'key: HS512 key must be at least 64 characters');
    expect(() => parseJwtConfig({ type: 'HS384', key: 'k'.repeat(48) })).not.toThrow();
    expect(() => parseJwtConfig({ type: 'HS512', key: 'k'.repeat(64) })).not.toThrow();
  });

  it('accepts RSA public keys as SPKI PEM, PKCS#1 PEM and X.509 certificates', () => {
    const pkcs1 = rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    for (const key of [rsa.spki, pkcs1, rsa.certificate]) {
      expect(parseJwtConfig({ type: 'RS256', key }).keys).toMatchObject({ kind: 'key', type: 'RS256' });
    }
  });

  it('accepts a PEM whose newlines arrive as literal \\n sequences', () => {
    const escaped = rsa.spki.trim().replace(/\n/g, '\\n');
    expect(escaped).not.toContain('\n');
    expect(parseJwtConfig({ type: 'RS256', key: escaped }).keys).toMatchObject({ kind: 'key', type: 'RS256' });
  });

  it('refuses private keys and OpenSSH keys with a clear message', () => {
    const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    rejects({ type: 'RS256', key: pem }, 'key: expected a public key or an X.509 certificate, got a private key');
    const ssh = rsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    rejects(
      { type: 'RS256', key: `ssh-rsa ${ssh} me@host` },
      'key: OpenSSH keys are not supported; give a PEM public key or an X.509 certificate',
    );
    rejects({ type: 'RS256', key: 'hello' }, 'key: RS256 key must be a PEM public key or an X.509 certificate');
  });

  it('refuses a key of another type than the configured algorithm', () => {
    rejects({ type: 'ES256', key: rsa.spki }, 'key: ES256 needs an EC P-256 key, got a rsa key');
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    rejects({ type: 'ES256', key: p384 }, 'key: ES256 needs an EC P-256 key, got an EC P-384 key');
    rejects({ type: 'Ed25519', key: rsa.spki }, 'key: Ed25519 needs an Ed25519 key, got a rsa key');
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    rejects({ type: 'RS256', key: small }, 'key: RS256 RSA key must be at least 2048 bits');
  });

  it('allows only one of claims_namespace and claims_namespace_path', () => {
    rejects(
      { type: 'HS256', key: HS256_KEY, claims_namespace: 'a', claims_namespace_path: '$.a' },
      'claims_namespace and claims_namespace_path both cannot be set',
    );
  });

  it('parses claims_namespace_path and refuses paths outside the supported grammar', () => {
    const config = parseJwtConfig({ type: 'HS256', key: HS256_KEY, claims_namespace_path: "$.a['b%'][0]" });
    expect(config.claims).toMatchObject({ kind: 'path', path: { segments: ['a', 'b%', 0] }, format: 'json' });
    rejects({ type: 'HS256', key: HS256_KEY, claims_namespace_path: 'a.b' }, 'claims_namespace_path: JSON path "a.b" must start with "$"');
    rejects(
      { type: 'HS256', key: HS256_KEY, claims_namespace_path: "$['a" },
      `claims_namespace_path: JSON path "$['a" has an unterminated bracket at position 1`,
    );
  });

  it('accepts claims_format json and stringified_json only', () => {
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, claims_format: 'stringified_json' }).claims).toMatchObject({
      format: 'stringified_json',
    });
    rejects({ type: 'HS256', key: HS256_KEY, claims_format: 'xml' }, 'claims_format: expected "json" or "stringified_json", got "xml"');
  });

  it('takes audience as a string or a non-empty list of strings', () => {
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, audience: 'a' }).audience).toEqual(['a']);
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, audience: ['a', 'b'] }).audience).toEqual(['a', 'b']);
    rejects({ type: 'HS256', key: HS256_KEY, audience: [] }, 'audience: expected a string or a non-empty list of strings');
    rejects({ type: 'HS256', key: HS256_KEY, audience: [1] }, 'audience: expected a string or a non-empty list of strings');
    rejects({ type: 'HS256', key: HS256_KEY, issuer: 5 }, 'issuer: expected a string, got a number');
    rejects({ type: 'HS256', key: HS256_KEY, issuer: '' }, 'issuer: expected a non-empty string (leave "issuer" out to accept any)');
  });

  it('refuses a public key (PEM or certificate) as an HMAC secret: anyone holding it could sign', () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    rejects(
      { type: 'HS256', key: pem },
      'key: HS256 key is a PEM public key or certificate, which anyone may hold: give HS256 a shared secret, or the key\'s own algorithm (RS256, ES256, ...)',
    );
  });

  it('takes allowed_skew as a non-negative integer', () => {
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, allowed_skew: 30 }).allowedSkew).toBe(30);
    rejects({ type: 'HS256', key: HS256_KEY, allowed_skew: -1 }, 'allowed_skew: expected a non-negative integer (seconds), got -1');
    rejects({ type: 'HS256', key: HS256_KEY, allowed_skew: 1.5 }, 'allowed_skew: expected a non-negative integer (seconds), got 1.5');
    rejects({ type: 'HS256', key: HS256_KEY, allowed_skew: '5' }, 'allowed_skew: expected a non-negative integer (seconds), got "5"');
  });

  it('takes header as an object or stringified object of the three shapes (Authorization, Cookie, CustomHeader)', () => {
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, header: { type: 'Cookie', name: 'jwt' } }).header).toEqual({
      type: 'Cookie',
      name: 'jwt',
    });
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, header: '{"type":"CustomHeader","name":"X-Token"}' }).header).toEqual({
      type: 'CustomHeader',
      name: 'x-token',
    });
    expect(parseJwtConfig({ type: 'HS256', key: HS256_KEY, header: '{"type":"Authorization"}' }).header).toEqual({ type: 'Authorization' });
    rejects({ type: 'HS256', key: HS256_KEY, header: { type: 'Cookie' } }, 'header: type Cookie needs a "name" that is a valid cookie name');
    rejects(
      { type: 'HS256', key: HS256_KEY, header: { type: 'Query' } },
      'header: "type" must be "Authorization", "Cookie" or "CustomHeader", got "Query"',
    );
    rejects({ type: 'HS256', key: HS256_KEY, header: { type: 'Cookie', name: 'a', extra: 1 } }, 'header: unknown field "extra"');
    rejects({ type: 'HS256', key: HS256_KEY, header: '{nope' }, 'header: expected a JSON object or its JSON text');
  });

  it('accepts the claims_map shapes (literal, path, path with default) and a literal list only for allowed roles', () => {
    const config = parseJwtConfig({
      type: 'HS256',
      key: HS256_KEY,
      claims_map: {
        'x-svc-allowed-roles': ['user'],
        'x-svc-default-role': 'user',
        'X-Svc-User-Id': { path: '$.sub' },
        'x-svc-org': { path: "$['org id']", default: 'none' },
      },
    });
    expect(config.claims.kind).toBe('map');
    if (config.claims.kind === 'map') expect([...config.claims.map.keys()]).toEqual(['x-svc-allowed-roles', 'x-svc-default-role', 'x-svc-user-id', 'x-svc-org']);
    rejects(
      { type: 'HS256', key: HS256_KEY, claims_map: { 'x-svc-user-id': ['a'] } },
      'claims_map.x-svc-user-id: a literal list is only allowed for x-svc-allowed-roles',
    );
    rejects({ type: 'HS256', key: HS256_KEY, claims_map: { 'x-svc-user-id': { path: 5 } } }, 'claims_map.x-svc-user-id: "path" must be a JSON path string');
    rejects(
      { type: 'HS256', key: HS256_KEY, claims_map: { 'x-svc-user-id': { path: '$.a', default: 1 } } },
      'claims_map.x-svc-user-id: "default" must be a string',
    );
    rejects({ type: 'HS256', key: HS256_KEY, claims_map: { 'user-id': 'a' } }, 'claims_map.user-id: session variable names must start with "x-svc-"');
    rejects({ type: 'HS256', key: HS256_KEY, claims_map: [] }, 'claims_map: expected an object, got a list');
  });
});
