/*
 * Which tokens we accept, held against jose's `jwtVerify` as an independent judge.
 *
 * For every generated case, our resolver's decision (the code `hooks.onJwtVerification` reports:
 * `ok`, a verification code or a claims code) must equal what jose decides under the same key and
 * claim options. jose judges every rule; where our documented rules are not jose's defaults, the
 * oracle below says so and models ours:
 *
 * - Order. We report the first failure in the order signature, `exp`, `nbf`, `iat`, `aud`, `iss`,
 *   claims; jose checks `nbf` before `exp` and the audience before times. The oracle asks jose one
 *   rule at a time, in our order (each question isolated by moving jose's clock and tolerance so
 *   that only that rule can fail).
 * - `iat`. `allowed_skew` applies to `iat` in the future too; jose checks `iat` only with
 *   `maxTokenAge`, so the oracle passes an unbounded `maxTokenAge` when the token has an `iat`.
 * - `iss`. A token without `iss` matches a configured `issuer`; jose requires the claim when
 *   `issuer` is set, so the oracle passes `issuer` only when the token carries `iss`.
 * - `aud`. A token without `aud` is refused when `audience` is configured: jose's rule too.
 * - Role claims. jose knows nothing of them: a verified token without them is
 *   `jwt-missing-role-claims`.
 * - Key sets. jose finds no key for a token whose `alg` the key named by its `kid` (or, without
 *   `kid`, any key) does not admit; we answer JWSInvalidSignature when that key is of the token's
 *   family (another hash or curve: the header lies about the algorithm) and NoUsableKeys otherwise,
 *   as for a configured key. Several keys with one `kid` are all tried, as jose's
 *   `JWKSMultipleMatchingKeys` lets a caller do.
 *
 * Times are whole seconds and the clock is frozen on a whole second: jose floors the clock to
 * seconds, we compare with it as it is, which only differs for fractional `nbf` values.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { CompactSign, createLocalJWKSet, errors, jwtVerify, type JWK, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSessionResolver, SessionError, type JwtVerificationResult, type SessionResolver } from '../src/index.js';
import { publicJwk, startJwksServer, type JwksServer } from './utils/jwks-server.js';
import { NAMESPACE } from './utils/keys.js';
import { silentLogger } from './utils/server.js';

/** The frozen clock, in seconds. */
const NOW = 1_900_000_000;
/** Moves jose's clock far enough that a time rule it is not asked about cannot fail. */
const FAR = 10_000_000;
const ISSUER = 'https://issuer.example';
const SUPPORTED = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const SECRET = 'a-shared-secret-of-at-least-32-characters';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaOther = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p256Other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const p521Other = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const ed = generateKeyPairSync('ed25519');
const edOther = generateKeyPairSync('ed25519');
const secret = new TextEncoder().encode(SECRET);

type Family = 'HMAC' | 'RSA' | 'EC' | 'OKP';
function familyOf(alg: string): Family | undefined {
  if (/^HS(256|384|512)$/.test(alg)) return 'HMAC';
  if (/^RS(256|384|512)$/.test(alg)) return 'RSA';
  if (/^ES(256|384|512)$/.test(alg)) return 'EC';
  if (alg === 'EdDSA' || alg === 'Ed25519') return 'OKP';
  return undefined;
}

function b64(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/** Signs `payload` (any JSON value, written as is) with `alg`; `none` gets an empty signature. */
async function signToken(payload: unknown, key: KeyObject | Uint8Array | undefined, header: Record<string, unknown>): Promise<string> {
  const text = JSON.stringify(payload);
  if (key === undefined) return `${b64(JSON.stringify(header))}.${b64(text)}.`;
  return new CompactSign(new TextEncoder().encode(text)).setProtectedHeader(header as { alg: string }).sign(key);
}

// ---------------------------------------------------------------------------------------------
// Generated cases

interface ClaimOptions {
  readonly allowedSkew: number;
  readonly audience: string | readonly string[] | undefined;
  readonly issuer: string | undefined;
}

const claimOptions: fc.Arbitrary<ClaimOptions> = fc.record({
  allowedSkew: fc.constantFrom(0, 0, 5, 30, 120),
  audience: fc.constantFrom(undefined, 'api', ['api', 'web'] as const),
  issuer: fc.constantFrom(undefined, ISSUER),
});

/** A time claim: mostly on the side where it passes (`sign` 1: the future, -1: the past), else near the edges or not a number. */
const time = (sign: 1 | -1): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 200, max: 100_000 }).map((offset) => NOW + sign * offset) },
    { weight: 4, arbitrary: fc.integer({ min: -200, max: 200 }).map((offset) => NOW + offset) },
    // Around the edges of a window of up to 120 s of skew.
    { weight: 3, arbitrary: fc.constantFrom(-121, -120, -31, -30, -6, -5, -1, 0, 1, 5, 6, 30, 31, 120, 121).map((offset) => NOW + offset) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('soon', null, [NOW]) },
  );

/** A payload: random claims, then the registered ones (any of them may be missing or odd), then the roles. */
const payload: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      extra: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      exp: time(1),
      nbf: time(-1),
      iat: time(-1),
      iss: fc.constantFrom<unknown>(ISSUER, ISSUER, 'https://other.example', 42, ''),
      aud: fc.constantFrom<unknown>('api', 'api', 'web', 'other', ['other', 'api'], ['other'], [], 7),
      roles: fc.constantFrom(true, true, true, true, false),
    },
    { requiredKeys: ['extra', 'roles'] },
  )
  .map(({ extra, roles, ...registered }) => {
    const claims: Record<string, unknown> = { ...extra };
    for (const [name, value] of Object.entries(registered)) claims[name] = value;
    claims[NAMESPACE] = roles ? { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } : { 'x-svc-user-id': '1' };
    return claims;
  });

/** One configured key (`type` + `key`) and the keys that sign for it, rightly or not. */
interface KeySetup {
  readonly type: string;
  readonly alg: string;
  readonly configKey: string;
  /** jose's key for the oracle: the public key as node:crypto reads it (or the secret). */
  readonly verifyKey: KeyObject | Uint8Array;
  readonly signingKey: KeyObject | Uint8Array;
  readonly otherKey: KeyObject | Uint8Array;
  /** Another algorithm of the same family, with a key that can sign it. */
  readonly sibling?: { alg: string; key: KeyObject | Uint8Array };
}

const pem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString();
const KEY_SETUPS: readonly KeySetup[] = [
  { type: 'HS256', alg: 'HS256', configKey: SECRET, verifyKey: secret, signingKey: secret, otherKey: new TextEncoder().encode(`${SECRET}!`), sibling: { alg: 'HS384', key: secret } },
  { type: 'RS256', alg: 'RS256', configKey: pem(rsa.publicKey), verifyKey: rsa.publicKey, signingKey: rsa.privateKey, otherKey: rsaOther.privateKey, sibling: { alg: 'RS384', key: rsa.privateKey } },
  { type: 'ES256', alg: 'ES256', configKey: pem(p256.publicKey), verifyKey: p256.publicKey, signingKey: p256.privateKey, otherKey: p256Other.privateKey, sibling: { alg: 'ES384', key: p384.privateKey } },
  { type: 'ES512', alg: 'ES512', configKey: pem(p521.publicKey), verifyKey: p521.publicKey, signingKey: p521.privateKey, otherKey: p521Other.privateKey, sibling: { alg: 'ES256', key: p256.privateKey } },
  { type: 'Ed25519', alg: 'EdDSA', configKey: pem(ed.publicKey), verifyKey: ed.publicKey, signingKey: ed.privateKey, otherKey: edOther.privateKey },
];

type Attack = 'none' | 'wrong-key' | 'tampered-signature' | 'tampered-payload' | 'alg-none' | 'hs256-with-public-pem' | 'sibling-alg' | 'ed25519-name';
const attack = fc.constantFrom<Attack>('none', 'none', 'none', 'none', 'none', 'none', 'wrong-key', 'tampered-signature', 'tampered-payload', 'alg-none', 'hs256-with-public-pem', 'sibling-alg', 'ed25519-name');

/** Flips one character of the signature (it may land on bits base64url does not use: then the token is still good, for jose too). */
function tamperSignature(token: string, at: number): string {
  const [header, body, signature = ''] = token.split('.');
  if (signature.length === 0) return token;
  const i = at % signature.length;
  const flipped = signature[i] === 'A' ? 'B' : 'A';
  return `${header}.${body}.${signature.slice(0, i)}${flipped}${signature.slice(i + 1)}`;
}

async function keyToken(setup: KeySetup, claims: Record<string, unknown>, kind: Attack, at: number): Promise<string> {
  switch (kind) {
    case 'none':
      return signToken(claims, setup.signingKey, { alg: setup.alg });
    case 'wrong-key':
      return signToken(claims, setup.otherKey, { alg: setup.alg });
    case 'tampered-signature':
      return tamperSignature(await signToken(claims, setup.signingKey, { alg: setup.alg }), at);
    case 'tampered-payload': {
      const [header, , signature] = (await signToken(claims, setup.signingKey, { alg: setup.alg })).split('.');
      return `${header}.${b64(JSON.stringify({ ...claims, [NAMESPACE]: { 'x-svc-allowed-roles': ['admin'], 'x-svc-default-role': 'admin' } }))}.${signature}`;
    }
    case 'alg-none':
      return signToken(claims, undefined, { alg: 'none' });
    case 'hs256-with-public-pem':
      // Algorithm confusion: the public key's PEM text used as an HMAC secret.
      return signToken(claims, new TextEncoder().encode(setup.type === 'HS256' ? SECRET : setup.configKey), { alg: 'HS256' });
    case 'sibling-alg':
      return setup.sibling ? signToken(claims, setup.sibling.key, { alg: setup.sibling.alg }) : signToken(claims, setup.signingKey, { alg: setup.alg });
    case 'ed25519-name':
      // RFC 9864's fully specified name: the same check as EdDSA with an Ed25519 key.
      return signToken(claims, setup.signingKey, { alg: setup.alg === 'EdDSA' ? 'Ed25519' : setup.alg });
  }
}

/** The key set behind `jwk_url`: two RSA keys share the kid `dup` (only the second signs `dup` tokens). */
interface SetKey {
  readonly kid: string;
  readonly family: Family;
  readonly jwk: () => Promise<JWK>;
}
const SET_KEYS: readonly SetKey[] = [
  { kid: 'rsa', family: 'RSA', jwk: () => publicJwk(rsa.publicKey, 'rsa', 'RS256') },
  { kid: 'dup', family: 'RSA', jwk: () => publicJwk(rsaOther.publicKey, 'dup', 'RS256') },
  { kid: 'dup', family: 'RSA', jwk: () => publicJwk(rsa.publicKey, 'dup', 'RS256') },
  // No `alg`: the curve implies ES256, for jose and for us.
  { kid: 'ec', family: 'EC', jwk: () => publicJwk(p256.publicKey, 'ec') },
  { kid: 'ed', family: 'OKP', jwk: () => publicJwk(ed.publicKey, 'ed', 'EdDSA') },
];

const signers = [
  { alg: 'RS256', key: rsa.privateKey, kid: 'rsa' },
  { alg: 'RS256', key: rsa.privateKey, kid: 'dup' },
  { alg: 'RS256', key: rsaOther.privateKey, kid: 'rsa' },
  { alg: 'RS384', key: rsa.privateKey, kid: 'rsa' },
  { alg: 'ES256', key: p256.privateKey, kid: 'ec' },
  { alg: 'ES384', key: p384.privateKey, kid: 'ec' },
  { alg: 'EdDSA', key: ed.privateKey, kid: 'ed' },
  { alg: 'HS256', key: secret, kid: 'rsa' },
] as const;

/** `kid` games: the signer's kid, an unknown one, the kid of a key of another type, none, or the shared one. */
const kidChoice = fc.constantFrom('own', 'own', 'own', 'own', 'unknown', 'ec', 'rsa', 'absent', 'dup');

// ---------------------------------------------------------------------------------------------
// The judges

type Decision = JwtVerificationResult;

/** jose's error as the code we answer with (see the header comment for the two modelled rules). */
function codeOf(error: unknown): Decision {
  if (error instanceof errors.JWTExpired) return 'JWTExpired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'invalid') return 'JWTClaimsSetDecodeError';
    const byClaim: Record<string, Decision> = { nbf: 'JWTNotYetValid', iat: 'JWTIssuedAtFuture', aud: 'JWTNotInAudience', iss: 'JWTNotInIssuer' };
    const code = byClaim[error.claim];
    if (code !== undefined) return code;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) return 'JWSInvalidSignature';
  // A key set holds no key for the token's algorithm (HMAC algorithms never have one).
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JOSENotSupported) return 'NoUsableKeys';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'CompactDecodeError';
  throw error;
}

/**
 * jose's `jwtVerify`, trying each key when several match (jose's documented way with
 * `JWKSMultipleMatchingKeys`): the first key whose signature holds decides.
 */
async function joseVerify(token: string, key: KeyObject | Uint8Array | JWTVerifyGetKey, options: JWTVerifyOptions): Promise<void> {
  try {
    await (typeof key === 'function' ? jwtVerify(token, key, options) : jwtVerify(token, key, options));
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const candidate of error) {
      try {
        await jwtVerify(token, candidate, options);
        return;
      } catch (next) {
        if (!(next instanceof errors.JWSSignatureVerificationFailed)) throw next;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

const at = (seconds: number): Date => new Date(seconds * 1000);

/** What jose decides, one rule at a time in our order, with our documented rules modelled. */
async function oracle(
  token: string,
  claims: Record<string, unknown>,
  key: KeyObject | Uint8Array | JWTVerifyGetKey,
  algorithms: readonly string[],
  options: ClaimOptions,
): Promise<Decision> {
  const ask = async (extra: JWTVerifyOptions): Promise<Decision | undefined> => {
    try {
      await joseVerify(token, key, { algorithms: [...algorithms], ...extra });
      return undefined;
    } catch (error) {
      return codeOf(error);
    }
  };
  const skew = options.allowedSkew;
  const steps: JWTVerifyOptions[] = [
    // The JWS (and the claims' types), with no time window at all.
    { currentDate: at(NOW), clockTolerance: FAR * 2 },
    // exp alone: the clock moved forward and the tolerance with it, so nbf cannot fail.
    { currentDate: at(NOW + FAR), clockTolerance: skew + FAR },
    // nbf alone: the clock moved back.
    { currentDate: at(NOW - FAR), clockTolerance: skew + FAR },
  ];
  if (typeof claims['iat'] === 'number') steps.push({ currentDate: at(NOW), clockTolerance: skew, maxTokenAge: FAR * 2 });
  if (options.audience !== undefined) steps.push({ currentDate: at(NOW), clockTolerance: FAR * 2, audience: typeof options.audience === 'string' ? options.audience : [...options.audience] });
  if (options.issuer !== undefined && Object.hasOwn(claims, 'iss')) steps.push({ currentDate: at(NOW), clockTolerance: FAR * 2, issuer: options.issuer });
  for (const step of steps) {
    const refused = await ask(step);
    if (refused !== undefined) return refused;
  }
  const roles = claims[NAMESPACE] as Record<string, unknown>;
  return roles['x-svc-allowed-roles'] === undefined ? 'jwt-missing-role-claims' : 'ok';
}

const resolvers = new Map<string, { resolver: SessionResolver; last: { result?: Decision | undefined } }>();

async function resolverFor(jwt: Record<string, unknown>): Promise<{ resolver: SessionResolver; last: { result?: Decision | undefined } }> {
  const key = JSON.stringify(jwt);
  let entry = resolvers.get(key);
  if (entry === undefined) {
    const last: { result?: Decision | undefined } = {};
    const resolver = createSessionResolver({ jwt, adminSecret: 'admin', logger: silentLogger, hooks: { onJwtVerification: (result) => (last.result = result) } });
    await resolver.ready?.();
    entry = { resolver, last };
    resolvers.set(key, entry);
  }
  return entry;
}

/** Our decision, asked twice: the second time may be a cache hit and must not differ. */
async function ours(jwt: Record<string, unknown>, token: string): Promise<Decision> {
  const { resolver, last } = await resolverFor(jwt);
  const decisions: (Decision | undefined)[] = [];
  for (let i = 0; i < 2; i++) {
    last.result = undefined;
    try {
      await resolver.resolve({ authorization: `Bearer ${token}` });
    } catch (error) {
      if (!(error instanceof SessionError)) throw error;
    }
    decisions.push(last.result);
  }
  expect(decisions[1]).toBe(decisions[0]);
  return decisions[0] as Decision;
}

function configOf(options: ClaimOptions): Record<string, unknown> {
  return {
    allowed_skew: options.allowedSkew,
    ...(options.audience !== undefined && { audience: options.audience }),
    ...(options.issuer !== undefined && { issuer: options.issuer }),
  };
}

// ---------------------------------------------------------------------------------------------

let jwks: JwksServer;
beforeAll(async () => {
  jwks = await startJwksServer();
  jwks.keys = await Promise.all(SET_KEYS.map((k) => k.jwk()));
});
afterAll(async () => {
  for (const { resolver } of resolvers.values()) resolver.dispose();
  await jwks.close();
});
afterEach(() => {
  vi.useRealTimers();
});

function freezeClock(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW * 1000);
}

/** Every decision must come up, so that a generator that drifted cannot pass a property vacuously. */
function expectSeen(seen: ReadonlySet<Decision>, decisions: readonly Decision[]): void {
  expect(decisions.filter((decision) => !seen.has(decision))).toEqual([]);
}

describe('our token decisions against jose', () => {
  it('a configured key: the same decision and error as jose for random claims, skew, audiences, issuers and attacks', async () => {
    freezeClock();
    const seen = new Set<Decision>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...KEY_SETUPS), claimOptions, payload, attack, fc.nat(), async (setup, options, claims, kind, position) => {
        const token = await keyToken(setup, claims, kind, position);
        const expected = await oracle(token, claims, setup.verifyKey, setup.alg === 'EdDSA' ? ['EdDSA', 'Ed25519'] : [setup.alg], options);
        seen.add(expected);
        expect(await ours({ type: setup.type, key: setup.configKey, ...configOf(options) }, token)).toBe(expected);
      }),
      { numRuns: 500 },
    );
    expectSeen(seen, [
      'ok',
      'JWSInvalidSignature',
      'JWTExpired',
      'JWTNotYetValid',
      'JWTIssuedAtFuture',
      'JWTNotInAudience',
      'JWTNotInIssuer',
      'JWTClaimsSetDecodeError',
      'jwt-missing-role-claims',
    ]);
  });

  it('a jwk_url key set: the same decision and error as jose for kid games, algorithm confusion and claims', async () => {
    freezeClock();
    const set = createLocalJWKSet({ keys: jwks.keys });
    const seen = new Set<Decision>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...signers), kidChoice, claimOptions, payload, fc.constantFrom(false, false, false, true), fc.nat(), async (signer, kidKind, options, claims, tamper, position) => {
        const kid = kidKind === 'own' ? signer.kid : kidKind === 'unknown' ? 'no-such-kid' : kidKind === 'absent' ? undefined : kidKind;
        let token = await signToken(claims, signer.key, { alg: signer.alg, ...(kid !== undefined && { kid }) });
        if (tamper) token = tamperSignature(token, position);
        let expected = await oracle(token, claims, set, SUPPORTED, options);
        // Our rule where jose finds no key: a key of the token's family under its kid means the
        // header lies about the algorithm (JWSInvalidSignature), as with a configured key.
        const named = SET_KEYS.filter((k) => kid === undefined || k.kid === kid);
        if (expected === 'NoUsableKeys' && named.some((k) => k.family === familyOf(signer.alg))) expected = 'JWSInvalidSignature';
        seen.add(expected);
        expect(await ours({ jwk_url: jwks.url, ...configOf(options) }, token)).toBe(expected);
      }),
      { numRuns: 300 },
    );
    expectSeen(seen, ['ok', 'JWSInvalidSignature', 'NoUsableKeys', 'JWTExpired', 'JWTNotInAudience']);
  });
});

