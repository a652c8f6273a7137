/**
 * Who a request is, as `context.session`. Variable names are lower-cased and keep
 * their prefix; `<prefix>role` is always present.
 */
export interface Session {
  /** The role the request acts as. */
  role: string;
  /** Session variables, e.g. `{ 'x-svc-role': 'user', 'x-svc-user-id': '42' }`. */
  variables: Record<string, string>;
  /** True when the role is `admin` (by admin secret, or a token whose selected role is `admin`). */
  isAdmin: boolean;
  /** When the token expires; absent for admin and unauthorized sessions and tokens without `exp`. */
  expiresAt?: Date;
}
