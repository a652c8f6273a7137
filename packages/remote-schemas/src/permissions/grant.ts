import type { ConstValueNode } from 'graphql';

/**
 * What one role may use of one remote schema, checked against the remote's own schema and written
 * in the remote's own names (customization is applied after, as for everyone). Built from the
 * role's SDL by `validateRoleSchema`; read to build the role's schema and to add presets to what
 * is sent to the remote.
 */
export interface RoleGrant {
  /** Every type the role may see, by the remote's name for it (built-in scalars included when used). */
  readonly types: ReadonlyMap<string, TypeGrant>;
  /** The remote's root type names the role may use, by operation. */
  readonly roots: Readonly<Partial<Record<'query' | 'mutation' | 'subscription', string>>>;
  /** Whether any argument or input field of the grant has a preset (if none, documents travel as written). */
  readonly hasPresets: boolean;
}

export type TypeGrant =
  | { readonly kind: 'object' | 'interface'; readonly fields: ReadonlyMap<string, FieldGrant>; readonly interfaces: readonly string[] }
  | { readonly kind: 'input'; readonly fields: ReadonlyMap<string, InputValueGrant> }
  | { readonly kind: 'enum'; readonly values: ReadonlySet<string> }
  | { readonly kind: 'union'; readonly members: readonly string[] }
  | { readonly kind: 'scalar' };

export interface FieldGrant {
  /** The arguments the role's SDL lists, by name; one with a preset is hidden from the role. */
  readonly args: ReadonlyMap<string, InputValueGrant>;
}

/** An argument or input field the role's SDL lists. */
export interface InputValueGrant {
  /** Set by the gateway, never by the client: the field or argument is left out of the role's schema. */
  readonly preset?: Preset;
}

/**
 * `@preset(value: …, static: Boolean)`: `value` as written in the SDL. A string starting with the
 * session variable prefix (`x-svc-`) names a session variable unless `static` is true; anything
 * else is a literal of the argument's type.
 */
export interface Preset {
  readonly value: ConstValueNode;
  readonly static: boolean;
}
