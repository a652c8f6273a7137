import { createHmac } from 'node:crypto';
import fc from 'fast-check';

const NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

/**
 * A number written into JSON text as is: big integers, `-0`, exponents that overflow a double. A
 * claims object built by a test can hold what `JSON.stringify` would round or refuse.
 */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** Claims as the fuzz suite writes them: JSON values, plus {@link RawNumber}s anywhere. */
export type ClaimValue = null | boolean | number | string | RawNumber | ClaimValue[] | { [key: string]: ClaimValue };

/** JSON text of `value`; a {@link RawNumber} is written verbatim. */
function jsonText(value: ClaimValue): string {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`)
      .join(',')}}`;
  }
  // NaN and the infinities have no JSON form; JSON.stringify writes null, as a real issuer would.
  return JSON.stringify(value);
}

function base64url(input: string | Uint8Array): string {
  return Buffer.from(input).toString('base64url');
}

/** A compact JWS over the given header and payload texts, HMAC-signed with `key` (or unsigned). */
function compactJws(
  header: string,
  payload: string | Uint8Array,
  sign: { alg: 'HS256' | 'HS384' | 'HS512'; key: string } | 'none',
): string {
  const input = `${base64url(header)}.${base64url(payload)}`;
  if (sign === 'none') return `${input}.`;
  const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[sign.alg];
  return `${input}.${createHmac(hash, sign.key).update(input).digest('base64url')}`;
}

/** A well-formed HS256 token over `claims`, signed with `key`. */
export function signHs256(claims: ClaimValue, key: string): string {
  return compactJws(JSON.stringify({ alg: 'HS256', typ: 'JWT' }), jsonText(claims), { alg: 'HS256', key });
}

/** Claims that the server accepts for `role`, valid for an hour (longer than a long fuzz run). */
export function userClaims(role: string): ClaimValue {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: 'fuzz',
    iat: now,
    exp: now + 3600,
    [NAMESPACE]: { 'x-svc-default-role': role, 'x-svc-allowed-roles': [role], 'x-svc-user-id': '7' },
  };
}

const rawNumber = fc
  .oneof(
    fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
    fc.constantFrom('-0', '1e400', '-1e400', '1E-400', '9007199254740993', '0.1e1', '123456789012345678901234567890.5', '1e+2'),
  )
  .map((text) => new RawNumber(text));

/** A short string that is likely to mean something to the server, or nothing at all. */
const word = fc.oneof(
  fc.constantFrom('user', 'admin', 'editor', 'anonymous', '', ' user', 'USER', 'x-svc-role', '7', 'null', 'true'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

/** Any claim value: scalars, big numbers, lists and nested objects. */
const claimValue: fc.Arbitrary<ClaimValue> = fc.letrec<{ value: ClaimValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    rawNumber,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(word, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const sessionVariableName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('x-svc-user-id', 'X-Svc-User-Id', 'x-svc-org', 'x-svc-role', 'x-svc-') },
  { weight: 4, arbitrary: fc.string({ maxLength: 10 }).map((suffix) => `x-svc-${suffix}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);

/** Session variables are strings; numbers and booleans pass as their JSON text; anything else is refused. */
const sessionVariableValue: fc.Arbitrary<ClaimValue> = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), rawNumber) },
  { weight: 1, arbitrary: claimValue },
);

const timestamp: fc.Arbitrary<ClaimValue> = fc.oneof(
  fc.integer({ min: -600, max: 3600 }).map((offset) => Math.floor(Date.now() / 1000) + offset),
  fc.integer(),
  fc.double(),
  rawNumber,
  claimValue,
);

const REGISTERED = ['sub', 'iat', 'exp', 'nbf', 'aud', 'iss', 'jti'] as const;

/** One way of spoiling claims that would pass; `undefined` as a value deletes the member. */
type Spoiler =
  | { at: 'top'; key: string; value: ClaimValue | undefined }
  | { at: 'namespace-key'; key: string }
  | { at: 'namespace'; value: ClaimValue }
  | { at: 'session'; key: string; value: ClaimValue | undefined };

const spoiler: fc.Arbitrary<Spoiler> = fc.oneof(
  fc.record({ at: fc.constant('top' as const), key: fc.constantFrom(...REGISTERED), value: fc.option(timestamp, { nil: undefined }) }),
  fc.record({ at: fc.constant('top' as const), key: word, value: claimValue }),
  fc.record({
    at: fc.constant('namespace-key' as const),
    key: fc.constantFrom(`${NAMESPACE}/`, 'https://hasura.io/jwt/claims', '', NAMESPACE.toUpperCase()),
  }),
  fc.record({ at: fc.constant('namespace' as const), value: fc.oneof(claimValue, claimValue.map(jsonText)) }),
  fc.record({
    at: fc.constant('session' as const),
    key: fc.constantFrom('x-svc-default-role', 'x-svc-allowed-roles'),
    value: fc.option(fc.oneof(claimValue, fc.uniqueArray(word, { maxLength: 4 })), { nil: undefined }),
  }),
);

/**
 * A claims object: one that the server accepts for the role `user`, with random session variables,
 * and in most runs one to three members spoiled (a registered claim of any type or time, the
 * namespace moved or replaced, the role claims changed or gone).
 */
const claimsObject: fc.Arbitrary<ClaimValue> = fc
  .tuple(
    fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 3, arbitrary: fc.array(spoiler, { minLength: 1, maxLength: 3 }) }),
    fc.dictionary(sessionVariableName, sessionVariableValue, { maxKeys: 4 }),
    fc.uniqueArray(word, { maxLength: 3 }),
  )
  .map(([spoilers, variables, moreRoles]) => {
    const now = Math.floor(Date.now() / 1000);
    const top: Record<string, ClaimValue> = { sub: 'fuzz', iat: now, exp: now + 600 };
    let namespaceKey = NAMESPACE;
    let namespace: ClaimValue = { ...variables, 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user', ...moreRoles] };
    for (const s of spoilers) {
      if (s.at === 'top') {
        if (s.value === undefined) delete top[s.key];
        else top[s.key] = s.value;
      } else if (s.at === 'namespace-key') {
        namespaceKey = s.key;
      } else if (s.at === 'namespace') {
        namespace = s.value;
      } else if (typeof namespace === 'object' && namespace !== null && !Array.isArray(namespace) && !(namespace instanceof RawNumber)) {
        if (s.value === undefined) delete namespace[s.key];
        else namespace[s.key] = s.value;
      }
    }
    return { ...top, [namespaceKey]: namespace };
  });

/** The payload of a signed token: usually a claims object, sometimes any JSON, text or bytes. */
const payload: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { weight: 12, arbitrary: claimsObject.map(jsonText) },
  { weight: 1, arbitrary: claimValue.map(jsonText) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }) },
);

const header: fc.Arbitrary<string> = fc.oneof(
  { weight: 20, arbitrary: fc.constant(JSON.stringify({ alg: 'HS256', typ: 'JWT' })) },
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          alg: fc.oneof(fc.constantFrom('HS256', 'HS384', 'HS512', 'RS256', 'ES256', 'EdDSA', 'none', 'None', 'hs256', ''), claimValue),
          typ: claimValue,
          kid: claimValue,
          crit: claimValue,
          b64: claimValue,
        },
        { requiredKeys: ['alg'] },
      )
      .map(jsonText),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const signature = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ alg: 'HS256' as const, key: 'right' }) },
  { weight: 1, arbitrary: fc.constantFrom('HS384' as const, 'HS512' as const).map((alg) => ({ alg, key: 'right' })) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map((key) => ({ alg: 'HS256' as const, key })) },
  { weight: 1, arbitrary: fc.constant('none' as const) },
);

/**
 * A token built from a random header, payload and signature; `key` is the server's HS256 key,
 * used for the `right` signatures so that most tokens get past verification to the claims.
 */
export function signedToken(key: string): fc.Arbitrary<string> {
  return fc
    .tuple(header, payload, signature)
    .map(([h, p, s]) => compactJws(h, p, s === 'none' ? 'none' : { alg: s.alg, key: s.key === 'right' ? key : s.key }));
}

/** Text that looks like a token from far away: base64url-ish segments with stray characters. */
export const tokenLike: fc.Arbitrary<string> = fc
  .array(fc.string({ unit: fc.constantFrom(...'ABCxyz019-_=+/.~ '.split('')), maxLength: 30 }), { minLength: 1, maxLength: 5 })
  .map((segments) => segments.join('.'));
