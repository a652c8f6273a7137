import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  parse,
  type ConstDirectiveNode,
  type DefinitionNode,
  type DocumentNode,
  type EnumValueDefinitionNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  type NamedTypeNode,
} from 'graphql';
import { englishList } from './english.js';
import type { TypeGrant } from './grant.js';

/**
 * A role's SDL read on its own: parsed, its type definitions and extensions merged by name, its
 * schema block's roots; the problems of the document itself (duplicates, extensions of nothing,
 * operations) are reasons. Checking it against the remote is validate.ts's.
 */

export const OPERATIONS = ['query', 'mutation', 'subscription'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const DEFAULT_ROOT_NAMES: Readonly<Record<Operation, string>> = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' };

export type RoleTypeKind = TypeGrant['kind'];
export const KIND_LABELS: Readonly<Record<RoleTypeKind, string>> = {
  object: 'Object',
  interface: 'Interface',
  union: 'Union',
  enum: 'Enum',
  input: 'Input object',
  scalar: 'Scalar',
};

/** One type of the role's SDL, its definition and extensions merged. */
export interface RoleType {
  readonly name: string;
  readonly kind: RoleTypeKind;
  readonly directives: ConstDirectiveNode[];
  readonly fields: FieldDefinitionNode[];
  readonly interfaces: NamedTypeNode[];
  readonly members: NamedTypeNode[];
  readonly values: EnumValueDefinitionNode[];
  readonly inputFields: InputValueDefinitionNode[];
}

export interface Definitions {
  readonly types: Map<string, RoleType>;
  /** Undefined when the SDL has neither a schema definition nor a schema extension. */
  readonly schemaRoots: Map<Operation, string> | undefined;
  readonly schemaDirectives: ConstDirectiveNode[];
}

/** The document, or undefined with a reason; a document with nothing in it is an empty one. */
export function parseRoleSchema(sdl: string, reasons: Set<string>): DocumentNode | undefined {
  try {
    return parse(sdl);
  } catch (error) {
    if (isBlank(sdl)) return { kind: Kind.DOCUMENT, definitions: [] };
    if (!(error instanceof GraphQLError)) throw error;
    const where = error.locations?.[0];
    const at = where ? ` (line ${where.line}, column ${where.column})` : '';
    reasons.add(`the schema cannot be parsed: ${error.message.replace(/\.$/, '')}${at}`);
    return undefined;
  }
}

function isBlank(sdl: string): boolean {
  try {
    return new Lexer(new Source(sdl)).advance().kind === TokenKind.EOF;
  } catch {
    return false;
  }
}

/** The type definitions of `document`, each merged with its extensions, and its schema block's roots; problems go to `reasons`. */
export function collectDefinitions(document: DocumentNode, reasons: Set<string>): Definitions {
  const types = new Map<string, RoleType>();
  const duplicates = new Set<string>();
  const extensions: DefinitionNode[] = [];
  let schemaRoots: Map<Operation, string> | undefined;
  const schemaDirectives: ConstDirectiveNode[] = [];
  let schemaDefinitions = 0;
  let executable = false;

  for (const definition of document.definitions) {
    switch (definition.kind) {
      case Kind.SCHEMA_DEFINITION:
      case Kind.SCHEMA_EXTENSION:
        if (definition.kind === Kind.SCHEMA_DEFINITION) schemaDefinitions++;
        schemaRoots ??= new Map();
        schemaDirectives.push(...(definition.directives ?? []));
        for (const { operation, type } of definition.operationTypes ?? []) {
          if (schemaRoots.has(operation)) {
            reasons.add(`the ${operation} root is given more than once in the schema definition`);
          }
          schemaRoots.set(operation, type.name.value);
        }
        break;
      case Kind.DIRECTIVE_DEFINITION:
        // Directives other than @preset are ignored, and so are their definitions.
        break;
      case Kind.OPERATION_DEFINITION:
      case Kind.FRAGMENT_DEFINITION:
        executable = true;
        break;
      default: {
        const kind = typeKindOf(definition);
        if (!kind) break;
        if (isExtension(definition)) {
          extensions.push(definition);
          break;
        }
        const name = definition.name.value;
        if (types.has(name)) duplicates.add(name);
        else types.set(name, emptyRoleType(name, kind));
        mergeInto(types.get(name), kind, definition);
      }
    }
  }
  for (const extension of extensions) {
    const kind = typeKindOf(extension);
    if (!kind || !('name' in extension) || !extension.name) continue;
    const name = extension.name.value;
    const base = types.get(name);
    if (!base) reasons.add(`cannot extend type "${name}" because it is not defined`);
    else if (base.kind !== kind) reasons.add(`cannot extend the ${KIND_LABELS[base.kind]} "${name}" as the ${KIND_LABELS[kind]}`);
    else mergeInto(base, kind, extension);
  }

  if (schemaDefinitions > 1) reasons.add('multiple schema definitions found');
  if (duplicates.size > 0) reasons.add(`duplicate type names found: ${englishList(duplicates)}`);
  if (executable) reasons.add('the schema contains an operation or a fragment, where only type definitions are expected');
  return { types, schemaRoots, schemaDirectives };
}

function typeKindOf(definition: DefinitionNode): RoleTypeKind | undefined {
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION:
      return 'object';
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION:
      return 'interface';
    case Kind.UNION_TYPE_DEFINITION:
    case Kind.UNION_TYPE_EXTENSION:
      return 'union';
    case Kind.ENUM_TYPE_DEFINITION:
    case Kind.ENUM_TYPE_EXTENSION:
      return 'enum';
    case Kind.INPUT_OBJECT_TYPE_DEFINITION:
    case Kind.INPUT_OBJECT_TYPE_EXTENSION:
      return 'input';
    case Kind.SCALAR_TYPE_DEFINITION:
    case Kind.SCALAR_TYPE_EXTENSION:
      return 'scalar';
    default:
      return undefined;
  }
}

function isExtension(definition: DefinitionNode): boolean {
  return definition.kind.endsWith('Extension');
}

function emptyRoleType(name: string, kind: RoleTypeKind): RoleType {
  return { name, kind, directives: [], fields: [], interfaces: [], members: [], values: [], inputFields: [] };
}

function mergeInto(type: RoleType | undefined, kind: RoleTypeKind, definition: DefinitionNode): void {
  if (!type || type.kind !== kind) return;
  const node = definition as Partial<{
    directives: readonly ConstDirectiveNode[];
    fields: readonly (FieldDefinitionNode | InputValueDefinitionNode)[];
    interfaces: readonly NamedTypeNode[];
    types: readonly NamedTypeNode[];
    values: readonly EnumValueDefinitionNode[];
  }>;
  type.directives.push(...(node.directives ?? []));
  if (kind === 'input') type.inputFields.push(...((node.fields ?? []) as readonly InputValueDefinitionNode[]));
  else type.fields.push(...((node.fields ?? []) as readonly FieldDefinitionNode[]));
  type.interfaces.push(...(node.interfaces ?? []));
  type.members.push(...(node.types ?? []));
  type.values.push(...(node.values ?? []));
}
