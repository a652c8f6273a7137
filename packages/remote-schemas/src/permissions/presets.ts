import {
  GraphQLError,
  Kind,
  TypeInfo,
  astFromValue,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isScalarType,
  print,
  typeFromAST,
  valueFromASTUntyped,
  visit,
  visitWithTypeInfo,
  type ArgumentNode,
  type ConstValueNode,
  type DocumentNode,
  type FieldNode,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
  type ObjectFieldNode,
  type Source,
  type StringValueNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import { PrintedLocations, SplicedLocations, type SentLocations } from '../locations.js';
import type { InputValueGrant, Preset, RoleGrant } from './grant.js';
import { coerceSessionText } from './session-values.js';

/** Which input types of a grant presets touch (computed once per grant). */
export interface PresetShape {
  /** Input types with a preset field, directly or in an input type they contain. */
  readonly withPresets: ReadonlySet<string>;
  /**
   * Input types with nothing left for the role but presets: hidden from the role (an input object
   * cannot be empty), and always sent, built from their presets.
   */
  readonly hidden: ReadonlySet<string>;
}

const shapes = new WeakMap<RoleGrant, PresetShape>();

/**
 * Which input types of `grant` presets touch, following input fields into their types in
 * `remote` (the remote's schema the grant was checked against). Computed once per grant.
 */
export function presetShapeOf(grant: RoleGrant, remote: GraphQLSchema): PresetShape {
  let shape = shapes.get(grant);
  if (shape) return shape;
  // Each granted input field with the named type it has in the remote.
  const inputs = new Map<string, Array<{ grant: InputValueGrant; type: string }>>();
  for (const [name, typeGrant] of grant.types) {
    if (typeGrant.kind !== 'input') continue;
    const type = remote.getType(name);
    const remoteFields = isInputObjectType(type) ? type.getFields() : {};
    const fields: Array<{ grant: InputValueGrant; type: string }> = [];
    for (const [fieldName, field] of typeGrant.fields) {
      const remoteField = remoteFields[fieldName];
      fields.push({ grant: field, type: remoteField ? getNamedType(remoteField.type).name : '' });
    }
    inputs.set(name, fields);
  }
  // Both are fixed points: input types may refer to each other, in cycles too.
  const withPresets = new Set<string>();
  const hidden = new Set<string>();
  for (let changed = grant.hasPresets; changed; ) {
    changed = false;
    for (const [name, fields] of inputs) {
      if (!withPresets.has(name) && fields.some((f) => f.grant.preset !== undefined || withPresets.has(f.type))) {
        withPresets.add(name);
        changed = true;
      }
      if (!hidden.has(name) && fields.length > 0 && fields.every((f) => f.grant.preset !== undefined || hidden.has(f.type))) {
        hidden.add(name);
        changed = true;
      }
    }
  }
  shape = { withPresets, hidden };
  shapes.set(grant, shape);
  return shape;
}

/** The session as presets read it: variable names lower-cased, with their prefix. */
export interface PresetSession {
  role: string;
  variables: Readonly<Record<string, string>>;
}

export interface PresetRequest {
  /** In the remote's own names. */
  document: DocumentNode;
  variables: Readonly<Record<string, unknown>> | null | undefined;
  /** The client's source, into which the locations of `document`'s nodes point. */
  source?: Source | undefined;
}

export type PresetOutcome =
  | {
      /** The text to send: `undefined` when the document travels as given (only variables may have changed). */
      text: string | undefined;
      variables: Record<string, unknown> | null | undefined;
      /** Where the positions of `text` come from in the client's document (with `text`). */
      locations?: SentLocations;
      /**
       * The document `text` was printed from (with `text`): it may declare fewer variables than the
       * client's (a preset took the place of the argument one was given to).
       */
      document?: DocumentNode;
    }
  | {
      errors: GraphQLError[];
      /** For the logs (never for the client): why a session value could not be coerced, naming the preset. */
      detail?: string;
    };

class PresetError extends Error {
  readonly code: 'not-found' | 'coercion-error';
  readonly detail: string | undefined;
  constructor(code: 'not-found' | 'coercion-error', message: string, detail?: string) {
    super(message);
    this.code = code;
    this.detail = detail;
  }
}

/** A session preset in a compiled document: its literal is printed per request from the session. */
interface Slot {
  readonly preset: Preset;
  readonly type: GraphQLInputType;
  readonly where: string;
}

/**
 * The presets of one grant compiled into one document: the printed, rewritten text cut at the
 * places where a session value goes, and what each request must still do, in the order the
 * rewrite meets it (so that the first missing or bad session variable is the one reported).
 */
interface CompiledPresets {
  /** `undefined`: the document itself is unchanged. Else `pieces[i]`, slot `order[i]`, `pieces[i + 1]`, ... */
  readonly pieces: readonly string[] | undefined;
  readonly order: readonly number[];
  /** The rewritten document, its text with the markers, and the length of the `i`th marker in that text. */
  readonly printed?: { document: DocumentNode; text: string; markers: readonly number[] };
  /** The locations of `printed`, made on the first request that needs them. */
  locations?: PrintedLocations;
  /** Session presets (`slot`) and variables whose values get presets (`variable`), in the rewrite's order. */
  readonly steps: ReadonlyArray<{ slot: Slot } | { variable: string; type: GraphQLInputType }>;
}

/**
 * grant -> remote schema -> document -> its compiled rewrite (`null`: rewritten per request). A
 * grant belongs to one registry, and with it to one session variable prefix.
 */
const compiled = new WeakMap<RoleGrant, WeakMap<GraphQLSchema, WeakMap<DocumentNode, CompiledPresets | null>>>();

/** Marks the place of a session value in a printed document (an enum literal no client writes: checked). */
let markerCount = 0;

/**
 * Adds the presets of `grant` to a request for the remote: every preset argument of every field
 * selected (at any depth, fragments included), and every preset input field of every input object
 * the request sends, whether written in the document, taken from a variable's value or from a
 * default value. An input object the request does not send gets no presets, unless nothing but
 * presets is left of its type for the role (then it is always sent). A preset replaces whatever the
 * request had in its place. A session variable that is missing or cannot be coerced to its target
 * type makes the whole call fail with `not-found` or `coercion-error`: nothing is sent.
 *
 * The rewrite of a document is compiled once per (document, grant, remote schema): the document
 * is rewritten and printed with a marker where each session value goes. A request then only prints
 * its session values into those places and adds presets to the values of its variables. A
 * variable's default value gets presets whether or not the variable is given: the remote checks
 * a default value even when it does not use it.
 */
export function applyPresets(
  request: PresetRequest,
  remote: GraphQLSchema,
  grant: RoleGrant,
  session: PresetSession | undefined,
  sessionVariablePrefix: string,
): PresetOutcome {
  try {
    const compiledPresets = compiledFor(request, remote, grant, sessionVariablePrefix);
    const resolver = new PresetResolver(remote, grant, session, sessionVariablePrefix);
    if (compiledPresets === null) return resolver.apply(request);
    return resolver.bind(compiledPresets, request.variables, request.source);
  } catch (error) {
    if (error instanceof PresetError) {
      const errors = [new GraphQLError(error.message, { extensions: { code: error.code, path: '$' } })];
      return error.detail === undefined ? { errors } : { errors, detail: error.detail };
    }
    throw error;
  }
}

function compiledFor(request: PresetRequest, remote: GraphQLSchema, grant: RoleGrant, prefix: string): CompiledPresets | null {
  let bySchema = compiled.get(grant);
  if (!bySchema) compiled.set(grant, (bySchema = new WeakMap()));
  let byDocument = bySchema.get(remote);
  if (!byDocument) bySchema.set(remote, (byDocument = new WeakMap()));
  let result = byDocument.get(request.document);
  if (result === undefined) {
    result = new PresetResolver(remote, grant, undefined, prefix).compile(request.document);
    byDocument.set(request.document, result);
  }
  return result;
}

class PresetResolver {
  readonly #remote: GraphQLSchema;
  readonly #grant: RoleGrant;
  readonly #shape: PresetShape;
  readonly #session: PresetSession | undefined;
  readonly #prefix: string;
  /** While compiling: the session presets met, and where each request's variables get presets. */
  #steps: Array<{ slot: Slot } | { variable: string; type: GraphQLInputType }> | undefined;
  #marker = '';

  constructor(remote: GraphQLSchema, grant: RoleGrant, session: PresetSession | undefined, prefix: string) {
    this.#remote = remote;
    this.#grant = grant;
    this.#shape = presetShapeOf(grant, remote);
    this.#session = session;
    this.#prefix = prefix;
  }

  /**
   * The rewrite of `request`'s document, with a marker instead of each session value; `null` when
   * the printed text cannot be cut at the markers alone (the client wrote one).
   */
  compile(original: DocumentNode): CompiledPresets | null {
    const steps: Array<{ slot: Slot } | { variable: string; type: GraphQLInputType }> = [];
    this.#steps = steps;
    this.#marker = `SVC_PRESET_${(markerCount++).toString(36)}_${Math.random().toString(36).slice(2, 10)}_`;
    try {
      const { document, changed } = this.#rewrite(original, undefined, true);
      if (!changed) return { pieces: undefined, order: [], steps };
      const text = print(document);
      const pieces: string[] = [];
      const order: number[] = [];
      const pattern = new RegExp(`${this.#marker}(\\d+)`, 'g');
      let last = 0;
      for (const match of text.matchAll(pattern)) {
        pieces.push(text.slice(last, match.index));
        order.push(Number(match[1]));
        last = match.index + match[0].length;
      }
      pieces.push(text.slice(last));
      const slots = steps.filter((s) => 'slot' in s).length;
      if (order.length !== slots || new Set(order).size !== slots) return null;
      const markers = order.map((i) => `${this.#marker}${i}`.length);
      return { pieces, order, steps, printed: { document, text, markers } };
    } finally {
      this.#steps = undefined;
    }
  }

  /** A request's text and variables from the compiled rewrite of its document. */
  bind(compiledPresets: CompiledPresets, given: Readonly<Record<string, unknown>> | null | undefined, source: Source | undefined): PresetOutcome {
    let variables = given;
    const texts: string[] = [];
    for (const step of compiledPresets.steps) {
      if ('slot' in step) {
        const { preset, type, where } = step.slot;
        texts.push(print(toAst(this.#sessionValue(preset, type, where)!.value, type)));
      } else if (variables && Object.hasOwn(variables, step.variable)) {
        variables = { ...variables, [step.variable]: this.#json(variables[step.variable], step.type) };
      }
    }
    const { pieces, order, printed } = compiledPresets;
    if (!pieces || !printed) return { text: undefined, variables };
    let text = pieces[0]!;
    const values: string[] = [];
    for (let i = 0; i < order.length; i++) {
      const value = texts[order[i]!]!;
      values.push(value);
      text += value + pieces[i + 1]!;
    }
    compiledPresets.locations ??= new PrintedLocations(printed.document, printed.text, source);
    return {
      text,
      variables,
      document: printed.document,
      locations: new SplicedLocations(compiledPresets.locations, text, pieces, values, printed.markers),
    };
  }

  /** The rewrite done per request: a document whose printed text could not be cut at markers. */
  apply(request: PresetRequest): PresetOutcome {
    const { document, changed, variables } = this.#rewrite(request.document, request.variables, false);
    if (!changed) return { text: undefined, variables };
    const text = print(document);
    return { text, variables, document, locations: new PrintedLocations(document, text, request.source) };
  }

  #rewrite(
    original: DocumentNode,
    given: Readonly<Record<string, unknown>> | null | undefined,
    compiling: boolean,
  ): { document: DocumentNode; changed: boolean; variables: Readonly<Record<string, unknown>> | null | undefined } {
    let variables = given;
    let changed = false;
    const typeInfo = new TypeInfo(this.#remote);
    const document = visit(
      original,
      visitWithTypeInfo(typeInfo, {
        VariableDefinition: (node: VariableDefinitionNode) => {
          const type = typeFromAST(this.#remote, node.type) as GraphQLInputType | undefined;
          if (!type || !this.#touches(type)) return undefined;
          const name = node.variable.name.value;
          if (compiling) this.#steps!.push({ variable: name, type });
          else if (given && Object.hasOwn(given, name)) variables = { ...variables, [name]: this.#json(given[name], type) };
          // Given or not: the remote checks the default value, which lacks the fields left to presets.
          if (!node.defaultValue) return undefined;
          changed = true;
          return { ...node, defaultValue: this.#ast(node.defaultValue, type) as ConstValueNode };
        },
        Field: (node: FieldNode) => {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          if (!parent || !field) return undefined;
          const typeGrant = this.#grant.types.get(parent.name);
          const fieldGrant = typeGrant && 'fields' in typeGrant && typeGrant.kind !== 'input' ? typeGrant.fields.get(field.name) : undefined;
          const written = new Map((node.arguments ?? []).map((a) => [a.name.value, a]));
          let args: ArgumentNode[] | undefined;
          for (const arg of field.args) {
            const preset = fieldGrant?.args.get(arg.name)?.preset;
            const current = written.get(arg.name);
            let value: ValueNode | undefined;
            if (preset) value = this.#presetAst(preset, arg.type, `${parent.name}.${field.name}(${arg.name}:)`);
            else if (current) value = this.#touches(arg.type) ? this.#ast(current.value, arg.type) : current.value;
            else value = this.#absent(arg.type, arg.defaultValue);
            if (value === current?.value) continue;
            args ??= [...(node.arguments ?? [])];
            const replacement: ArgumentNode = { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: arg.name }, value: value! };
            const index = args.findIndex((a) => a.name.value === arg.name);
            if (index === -1) args.push(replacement);
            else args[index] = replacement;
          }
          if (!args) return undefined;
          changed = true;
          return { ...node, arguments: args };
        },
      }),
    );
    if (!changed) return { document: original, changed, variables };
    return { document: withoutUnusedVariables(document), changed, variables };
  }

  /** Whether a value of `type` may need presets. */
  #touches(type: GraphQLInputType): boolean {
    const named = getNamedType(type);
    return isInputObjectType(named) && this.#shape.withPresets.has(named.name);
  }

  /**
   * The value to send for an argument or input field the request leaves out: the presets of a
   * type with nothing but presets, or the remote's default value with presets added (the remote
   * would otherwise use its default without them). `undefined`: send nothing.
   */
  #absent(type: GraphQLInputType, defaultValue: unknown): ValueNode | undefined {
    const named = getNamedType(type);
    if (!isInputObjectType(named)) return undefined;
    if (this.#shape.hidden.has(named.name)) return this.#hiddenAst(named);
    if (defaultValue === undefined || !this.#shape.withPresets.has(named.name)) return undefined;
    const literal = astFromValue(defaultValue, type);
    return literal ? this.#ast(literal, type) : undefined;
  }

  #absentJson(type: GraphQLInputType, defaultValue: unknown): { value: unknown } | undefined {
    const named = getNamedType(type);
    if (!isInputObjectType(named)) return undefined;
    if (this.#shape.hidden.has(named.name)) return { value: this.#hiddenJson(named) };
    if (defaultValue === undefined || !this.#shape.withPresets.has(named.name)) return undefined;
    const literal = astFromValue(defaultValue, type);
    return literal ? { value: this.#json(valueFromASTUntyped(literal), type) } : undefined;
  }

  #inputFields(type: GraphQLInputObjectType): ReadonlyMap<string, InputValueGrant> {
    const typeGrant = this.#grant.types.get(type.name);
    return typeGrant?.kind === 'input' ? typeGrant.fields : new Map();
  }

  /** A value written in the document, with presets added to every input object in it. */
  #ast(node: ValueNode, type: GraphQLInputType): ValueNode {
    if (node.kind === Kind.VARIABLE || node.kind === Kind.NULL) return node;
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      const item = nullable.ofType as GraphQLInputType;
      if (node.kind === Kind.LIST) return { ...node, values: node.values.map((v) => this.#ast(v, item)) };
      return this.#ast(node, item);
    }
    if (!isInputObjectType(nullable) || node.kind !== Kind.OBJECT || !this.#shape.withPresets.has(nullable.name)) return node;
    const granted = this.#inputFields(nullable);
    const remoteFields = nullable.getFields();
    const given = new Map(node.fields.map((f) => [f.name.value, f]));
    const fields: ObjectFieldNode[] = [];
    for (const field of node.fields) {
      const remoteField = remoteFields[field.name.value];
      // A preset replaces what the request wrote; a field the remote does not know is its to refuse.
      if (!remoteField) fields.push(field);
      else if (!granted.get(field.name.value)?.preset) fields.push({ ...field, value: this.#ast(field.value, remoteField.type) });
    }
    for (const [name, fieldGrant] of granted) {
      const remoteField = remoteFields[name];
      if (!remoteField) continue;
      let value: ValueNode | undefined;
      if (fieldGrant.preset) value = this.#presetAst(fieldGrant.preset, remoteField.type, `${nullable.name}.${name}`);
      else if (!given.has(name)) value = this.#absent(remoteField.type, remoteField.defaultValue);
      if (value) fields.push({ kind: Kind.OBJECT_FIELD, name: { kind: Kind.NAME, value: name }, value });
    }
    return { ...node, fields };
  }

  /** A variable's value (JSON), with presets added to every input object in it. */
  #json(value: unknown, type: GraphQLInputType): unknown {
    if (value === null || value === undefined) return value;
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      const item = nullable.ofType as GraphQLInputType;
      return Array.isArray(value) ? value.map((v) => this.#json(v, item)) : this.#json(value, item);
    }
    if (!isInputObjectType(nullable) || typeof value !== 'object' || Array.isArray(value)) return value;
    if (!this.#shape.withPresets.has(nullable.name)) return value;
    const granted = this.#inputFields(nullable);
    const remoteFields = nullable.getFields();
    const out: Record<string, unknown> = {};
    for (const [name, fieldValue] of Object.entries(value as Record<string, unknown>)) {
      const remoteField = remoteFields[name];
      if (!remoteField) out[name] = fieldValue;
      else if (!granted.get(name)?.preset) out[name] = this.#json(fieldValue, remoteField.type);
    }
    for (const [name, fieldGrant] of granted) {
      const remoteField = remoteFields[name];
      if (!remoteField) continue;
      if (fieldGrant.preset) {
        out[name] = this.#presetJson(fieldGrant.preset, remoteField.type, `${nullable.name}.${name}`);
      } else if (!Object.hasOwn(out, name)) {
        const absent = this.#absentJson(remoteField.type, remoteField.defaultValue);
        if (absent) out[name] = absent.value;
      }
    }
    return out;
  }

  #hiddenAst(type: GraphQLInputObjectType): ValueNode {
    return this.#ast({ kind: Kind.OBJECT, fields: [] }, type);
  }

  #hiddenJson(type: GraphQLInputObjectType): unknown {
    return this.#json({}, type);
  }

  #presetAst(preset: Preset, type: GraphQLInputType, where: string): ValueNode {
    if (this.#steps && this.#namesSessionVariable(preset)) {
      const index = this.#steps.filter((s) => 'slot' in s).length;
      this.#steps.push({ slot: { preset, type, where } });
      return { kind: Kind.ENUM, value: `${this.#marker}${index}` };
    }
    const session = this.#sessionValue(preset, type, where);
    return session === undefined ? preset.value : toAst(session.value, type);
  }

  #presetJson(preset: Preset, type: GraphQLInputType, where: string): unknown {
    const session = this.#sessionValue(preset, type, where);
    return session === undefined ? valueFromASTUntyped(preset.value) : session.value;
  }

  #namesSessionVariable(preset: Preset): boolean {
    const { value } = preset;
    return !preset.static && value.kind === Kind.STRING && value.value.toLowerCase().startsWith(this.#prefix);
  }

  /** The coerced session value a preset names; `undefined` for a literal preset. */
  #sessionValue(preset: Preset, type: GraphQLInputType, where: string): { value: unknown } | undefined {
    if (!this.#namesSessionVariable(preset)) return undefined;
    const name = (preset.value as StringValueNode).value.toLowerCase();
    const text = this.#session?.variables[name] ?? (name === `${this.#prefix}role` ? this.#session?.role : undefined);
    if (text === undefined) throw new PresetError('not-found', `"${name}" session variable expected, but not found`);
    try {
      return { value: coerceSessionText(text, type) };
    } catch (cause) {
      const reason = cause instanceof Error ? `: ${cause.message}` : '';
      // The type and the field may be hidden from the role: they are named in the logs only.
      throw new PresetError(
        'coercion-error',
        `the value of session variable "${name}" cannot be coerced`,
        `the value of session variable "${name}" cannot be coerced to type "${String(type)}" (preset of ${where})${reason}`,
      );
    }
  }
}

/** A coerced session value as a literal of `type`. */
function toAst(value: unknown, type: GraphQLInputType): ConstValueNode {
  if (value === null || value === undefined) return { kind: Kind.NULL };
  const nullable = getNullableType(type);
  if (isListType(nullable) && Array.isArray(value)) {
    return { kind: Kind.LIST, values: value.map((v) => toAst(v, nullable.ofType as GraphQLInputType)) };
  }
  if (isEnumType(nullable) && typeof value === 'string') return { kind: Kind.ENUM, value };
  if (isScalarType(nullable) && (nullable.name === 'String' || nullable.name === 'ID')) {
    return { kind: Kind.STRING, value: String(value) };
  }
  if (isScalarType(nullable) && nullable.name === 'Float' && typeof value === 'number') {
    return { kind: Kind.FLOAT, value: String(value) };
  }
  return untypedAst(value);
}

/** Any JSON value as a literal (custom scalars and input objects given as JSON). */
function untypedAst(value: unknown): ConstValueNode {
  if (value === null || value === undefined) return { kind: Kind.NULL };
  if (typeof value === 'boolean') return { kind: Kind.BOOLEAN, value };
  if (typeof value === 'number') return Number.isInteger(value) ? { kind: Kind.INT, value: String(value) } : { kind: Kind.FLOAT, value: String(value) };
  if (typeof value === 'string') return { kind: Kind.STRING, value };
  if (Array.isArray(value)) return { kind: Kind.LIST, values: value.map(untypedAst) };
  return {
    kind: Kind.OBJECT,
    fields: Object.entries(value as Record<string, unknown>).map(([name, v]) => ({
      kind: Kind.OBJECT_FIELD,
      name: { kind: Kind.NAME, value: name },
      value: untypedAst(v),
    })),
  };
}

/**
 * `document` without the variable definitions nothing uses any more: a preset that replaced the
 * only argument a variable was given to (a relationship's join value, say) would leave the remote
 * a document it refuses (`Variable "$v" is never used`). Such a variable's value is not sent
 * either (see the outcome's `document`).
 */
function withoutUnusedVariables(document: DocumentNode): DocumentNode {
  const uses = new Map<string, number>();
  visit(document, {
    Variable(node) {
      uses.set(node.name.value, (uses.get(node.name.value) ?? 0) + 1);
    },
  });
  // A definition's own `$name` is one use.
  const unused = (definition: VariableDefinitionNode) => (uses.get(definition.variable.name.value) ?? 0) <= 1;
  if (!document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.variableDefinitions?.some(unused))) return document;
  return {
    ...document,
    definitions: document.definitions.map((definition) =>
      definition.kind === Kind.OPERATION_DEFINITION && definition.variableDefinitions?.some(unused)
        ? { ...definition, variableDefinitions: definition.variableDefinitions.filter((d) => !unused(d)) }
        : definition,
    ),
  };
}
