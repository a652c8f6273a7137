import type {
  DocumentNode,
  FieldNode,
  FragmentSpreadNode,
  InlineFragmentNode,
  VariableDefinitionNode,
} from 'graphql';
import type { LoadedRemote } from '../loaded-remote.js';
import type { PrintedLocations } from '../locations.js';

// The shape of a compiled plan: what `compile.ts` builds and `execute.ts` runs.

/**
 * Where `__typename` answers must be renamed in a remote's data: at `typename` keys, and below
 * `children` keys (through lists and nested lists alike).
 */
export interface TypenameMap {
  typename?: Set<string>;
  children?: Map<string, TypenameMap>;
  /** While compiling: keys of fields without a selection (a key may not be both one and `__typename`). */
  leaves?: Set<string>;
}

/** One HTTP request to one remote, or the part of the operation the gateway executes itself. */
export type PlannedCall = RemoteCall | LocalCall;

interface CallBase {
  document: DocumentNode;
  operationName: string | undefined;
  /** Each root response key of the call's document -> its path in the client's response. */
  paths: ReadonlyMap<string, readonly string[]>;
}

/** One HTTP request to one remote. */
export interface RemoteCall extends CallBase {
  local: false;
  remote: LoadedRemote;
  /** `document`, in the remote's own names, printed. */
  text: string;
  /** Where the positions of `text` come from in the client's document (its copied nodes kept their `loc`). */
  locations: PrintedLocations;
  /** The variables this call's document defines (only those are sent). */
  variables: readonly string[];
  /** `undefined`: the remote's answer needs no renaming. */
  typenames: TypenameMap | undefined;
  /** The remote's own object type names -> public names (`typenames` says where they are). */
  typeToPublic: ReadonlyMap<string, string>;
  /** Nothing to ask (a namespace field that selects only `__typename`): no request is sent. */
  empty: boolean;
}

/**
 * Root fields of the local schema and introspection (`__schema`, `__type`), executed by the
 * gateway on the client's schema: the client's own field nodes, every variable and fragment of the
 * operation, and the fragments with `@skip` / `@include` around them as inline fragments.
 */
export interface LocalCall extends CallBase {
  local: true;
}

/** A fragment spread, inline fragment or namespace field whose `@skip` / `@include` decide the fields inside. */
export type ConditionNode = FieldNode | InlineFragmentNode | FragmentSpreadNode;

/**
 * Where a response key first appears among the fields of its selection set (fragments spread in
 * place): its place in the response. `when`: every place of that key, with the nodes whose
 * `@skip` / `@include` decide it there (enclosing fragments and namespace field, then the field
 * itself); the first place where all of them include it decides, none: the key is left out.
 */
export interface Placement {
  at: number;
  when?: ReadonlyArray<{ at: number; nodes: readonly ConditionNode[] }>;
}

export interface NamespaceEntry extends Placement {
  key: string;
  /** The key of the field in the remote's answer (the client's, unless the namespace is selected under two keys). */
  remoteKey: string;
  typename?: string;
  /** Its field's type is non-null (`<Type>.<field>`): a null answered for it nulls the namespace field. */
  nonNull?: string;
}

export type RootEntry = Placement &
  (
    | { kind: 'field'; key: string; call: number; nonNull: boolean }
    | { kind: 'typename'; key: string; value: string }
    | { kind: 'namespace'; key: string; call: number; entries: readonly NamespaceEntry[] }
  );

/** An operation compiled for its schema: the requests to send, and how their answers make the client's response. */
export interface Plan {
  /** A subscription's plan has one call, to the remote of its root field (or namespace field), and one entry. */
  operation: 'query' | 'mutation' | 'subscription';
  /** The operation's variable definitions, checked against the client's schema before anything is sent. */
  variableDefinitions: readonly VariableDefinitionNode[];
  /** Queries: sent in parallel. Mutations: one after the other, in this order. */
  calls: readonly PlannedCall[];
  /** The client's root response keys, in the client's order when no directive decides otherwise. */
  entries: readonly RootEntry[];
  /** Some response keys carry `@skip` or `@include`: their order and presence are decided per request. */
  conditional: boolean;
}

/**
 * A plan, or why the operation is executed by delegation instead, or (a subscription under a
 * namespace, which delegation cannot run) why it is refused.
 */
export type PlanDecision =
  | { plan: Plan }
  | { fallback: string; operationName: string | undefined }
  | { refusal: string; operationName: string | undefined };

/** Why an operation cannot be planned (it is executed by delegation instead). */
export class Unplannable extends Error {}

export function fail(reason: string): never {
  throw new Unplannable(reason);
}
