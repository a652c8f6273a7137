import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  parse,
  type DocumentNode,
  type ParseOptions,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { nestingDepth } from './depth-limit.js';

/** Operations nested deeper than this are refused: far beyond any real operation, far below what exhausts the stack. */
export const MAX_OPERATION_DEPTH = 256;

/** Errors of this module that must keep their HTTP status (see `onExecutionResult` below). */
const limitErrors = new WeakSet<GraphQLError>();

function limitError(message: string, code: string, status: number, headers?: Record<string, string>): GraphQLError {
  const error = createGraphQLError(message, {
    extensions: { code, path: '$', http: { status, ...(headers && { headers }) } },
  });
  limitErrors.add(error);
  return error;
}

/**
 * A body declared this many times over the limit is not even read to its end: the connection is
 * closed after the answer. A smaller one is read and thrown away (never buffered), so that the
 * client, still sending, can read the 413 instead of meeting a reset connection.
 */
const DRAINED_MULTIPLE = 8;

function tooLarge(maxBytes: number, closeConnection: boolean): GraphQLError {
  return limitError(
    `request body is larger than ${maxBytes} bytes`,
    'payload-too-large',
    413,
    closeConnection ? { connection: 'close' } : undefined,
  );
}

/**
 * Refuses a GraphQL request body over `maxBytes` with 413 before it is buffered: at once from its
 * `Content-Length`, or, for a chunked body, as soon as the bytes read pass the limit.
 */
export function useRequestBodyLimit(maxBytes: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const length = request.headers.get('content-length');
      if (length !== null && /^\d+$/.test(length)) {
        if (Number(length) > maxBytes) throw tooLarge(maxBytes, Number(length) > maxBytes * DRAINED_MULTIPLE);
        // Node's HTTP parser hands over exactly Content-Length bytes: nothing more to count.
        return;
      }
      if (requestParser === undefined || request.body === null) return;
      const body = request.body;
      // whatwg-node may hand over a native stream or its own; pipe through a transform of that kind.
      const Transform = body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
      let read = 0;
      const limited = body.pipeThrough(
        new Transform<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            read += chunk.byteLength;
            // A chunked body has no end in sight: stop reading it.
            if (read > maxBytes) controller.error(tooLarge(maxBytes, true));
            else controller.enqueue(chunk);
          },
        }),
      );
      setRequestParser((original) =>
        requestParser(
          new fetchAPI.Request(original.url, {
            method: original.method,
            headers: original.headers,
            signal: original.signal,
            body: limited,
            duplex: 'half',
          } as RequestInit),
        ),
      );
    },
  };
}

/**
 * A `POST` whose body no request parser reads (its `Content-Type` is not JSON, a GraphQL string, a
 * form or multipart) is answered 415 in the server's error shape, instead of Yoga's empty 415.
 * Listed after Yoga's own parsers have chosen (their hooks run first).
 */
export function useUnsupportedMediaType(): Plugin {
  return {
    onRequestParse({ request, requestParser }) {
      if (request.method !== 'POST') return;
      // A compressed body would be read as text and answered "invalid JSON"; another charset's
      // bytes would be read as UTF-8 and the operation run with mangled text: both are refused.
      const encoding = request.headers.get('content-encoding');
      if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') {
        throw limitError(`unsupported Content-Encoding "${encoding.slice(0, 100)}"; send the request body uncompressed`, 'BAD_REQUEST', 415);
      }
      const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers.get('content-type') ?? '')?.[1];
      if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
        throw limitError(`unsupported charset "${charset.slice(0, 100)}"; send the request body as UTF-8`, 'BAD_REQUEST', 415);
      }
      if (requestParser !== undefined) return;
      const type = request.headers.get('content-type');
      throw limitError(
        type === null
          ? 'the request has no Content-Type; send the GraphQL request as application/json'
          : `unsupported Content-Type "${type.slice(0, 100)}"; send the GraphQL request as application/json`,
        'BAD_REQUEST',
        415,
      );
    },
  };
}

// graphql-js 16 words it "more that"; later versions may fix the typo.
const TOKEN_LIMIT_MESSAGE = /^Syntax Error: Document contains more th\w+ \d+ tokens/;

/**
 * `parse` bounded as {@link useOperationLimits} describes: throws the limit errors (with their HTTP
 * status) for a document over `maxTokens` tokens or nested deeper than `maxDepth`, else graphql-js's
 * own errors. Also used by the server's direct lane, so both paths refuse the same documents.
 */
export function createLimitedParse(options: { maxTokens: number; maxDepth?: number }): (source: string | Source, parseOptions?: ParseOptions) => DocumentNode {
  const { maxTokens } = options;
  const maxDepth = options.maxDepth ?? MAX_OPERATION_DEPTH;
  const tooDeep = () =>
    limitError(`the operation is nested too deeply: more than ${maxDepth} levels`, 'validation-failed', 400);
  const tooManyTokens = () => limitError(`the operation has more than ${maxTokens} tokens`, 'validation-failed', 400);
  return (source, parseOptions) => {
    const text = typeof source === 'string' ? source : source.body;
    if (nestingDepth(text, maxDepth) > maxDepth) throw tooDeep();
    // A token takes at least one character, so a shorter text cannot be over the limit. A
    // longer one is counted first with the lexer alone, several times cheaper than the parser
    // building a tree it would throw away.
    if (text.length > maxTokens && moreTokensThan(text, maxTokens)) throw tooManyTokens();
    let document: DocumentNode;
    try {
      document = parse(source, { ...parseOptions, maxTokens });
    } catch (error) {
      if (error instanceof GraphQLError && TOKEN_LIMIT_MESSAGE.test(error.message)) throw tooManyTokens();
      throw error;
    }
    if (expandedDepth(document, maxDepth) > maxDepth) throw tooDeep();
    return document;
  };
}

/**
 * Bounds the work one GraphQL document can cause, before and while it is parsed: at most
 * `maxTokens` lexical tokens (the parser stops at the first one past it) and at most `maxDepth`
 * levels of nesting, first in the text (graphql-js is recursive), then with fragments expanded
 * (shallow fragments spread into each other nest as deep as their text would). Runs only when a
 * document is not in Yoga's parser cache.
 */
export function useOperationLimits(
  options: { maxTokens: number; maxDepth?: number } | { parse: ReturnType<typeof createLimitedParse> },
): Plugin {
  const limitedParse = 'parse' in options ? options.parse : createLimitedParse(options);
  return {
    onParse({ setParseFn }) {
      setParseFn(limitedParse);
    },
    onExecutionResult({ result, setResult }) {
      // Yoga marks every parse failure as a GraphQL-over-HTTP "spec" error, which an
      // `application/json` client gets with 200; a refused operation is answered 400 whatever the
      // client accepts. A status on the result itself wins (and is not serialized).
      if (result === undefined || Symbol.asyncIterator in result || Array.isArray(result)) return;
      const error = result.errors?.find((e) => limitErrors.has(e as GraphQLError));
      const status = (error?.extensions?.['http'] as { status?: number } | undefined)?.status;
      if (status !== undefined) setResult({ ...result, extensions: { ...result.extensions, http: { status } } });
    },
  };
}

/** Whether `text` holds more than `limit` lexical tokens; a syntax error is left to the parser. */
function moreTokensThan(text: string, limit: number): boolean {
  const lexer = new Lexer(new Source(text));
  try {
    for (let count = 0; lexer.advance().kind !== TokenKind.EOF; ) {
      if (++count > limit) return true;
    }
  } catch {
    return false;
  }
  return false;
}

/**
 * Yoga's caches of parsed documents and parse errors, bounded by the text they hold as well as by
 * count: a client sending distinct documents of megabytes each must not fill memory with their
 * trees (a parsed document takes many times its text).
 */
export function boundedParserCaches(): { documentCache: LRUCache<string, DocumentNode>; errorCache: LRUCache<string, object> } {
  const options = {
    max: 1024,
    maxSize: 8 * 1024 * 1024,
    maxEntrySize: 256 * 1024,
    sizeCalculation: (_value: unknown, key: string) => Math.max(1, key.length),
  };
  return { documentCache: new LRUCache<string, DocumentNode>(options), errorCache: new LRUCache<string, object>(options) };
}

/**
 * The document of an operation's text from `caches` (the ones Yoga's parser uses), else parsed
 * with `parse` and kept there, so that Yoga finds it; `undefined` when the text does not parse or
 * failed before: Yoga parses it again, and answers and remembers the error.
 */
export function cachedDocuments(
  caches: { documentCache: LRUCache<string, DocumentNode>; errorCache: LRUCache<string, object> },
  parse: (text: string) => DocumentNode,
): (text: string) => DocumentNode | undefined {
  const { documentCache, errorCache } = caches;
  return (text) => {
    let document = documentCache.get(text);
    if (document !== undefined) return document;
    if (errorCache.has(text)) return undefined;
    try {
      document = parse(text);
    } catch {
      return undefined;
    }
    documentCache.set(text, document);
    return document;
  };
}

/**
 * The deepest nesting of `{ ( [` any operation of `document` would have with every fragment spread
 * replaced by the fragment's selections: a spread adds no level of its own, so an operation
 * written with fragments is as deep as the same operation written out (an inline fragment's
 * braces count, as they do in the text). Stops counting past `limit`. Each fragment's depth is
 * computed once, in dependency order and without recursing through spreads, so fragments that
 * spread each other many times, or in chains of any length, cost no more than their text. A
 * fragment cycle counts as nothing here: validation refuses it.
 */
export function expandedDepth(document: DocumentNode, limit: number): number {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  const known = new Map<string, number>();

  const valueDepth = (value: ValueNode): number => {
    let deepest = 0;
    if (value.kind === Kind.LIST) for (const item of value.values) deepest = Math.max(deepest, valueDepth(item));
    else if (value.kind === Kind.OBJECT) for (const field of value.fields) deepest = Math.max(deepest, valueDepth(field.value));
    else return 0;
    return 1 + deepest;
  };
  const argumentsDepth = (args: readonly { value: ValueNode }[] | undefined): number => {
    if (!args || args.length === 0) return 0;
    let deepest = 0;
    for (const arg of args) deepest = Math.max(deepest, valueDepth(arg.value));
    return 1 + deepest;
  };
  // A fragment's depth is that of its selections, each spread counting as the depth of the
  // fragment it names. They are computed in dependency order without recursing through spreads: a
  // chain of spreads adds no level, and may be as long as the token limit allows. A fragment of a
  // cycle counts as nothing where the cycle closes (validation refuses cycles anyway).
  const fragmentDepth = (name: string): number => known.get(name) ?? 0;
  const spreadsIn = (selectionSet: SelectionSetNode): string[] => {
    const names: string[] = [];
    const pending: SelectionSetNode[] = [selectionSet];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const selection of next.selections) {
        if (selection.kind === Kind.FRAGMENT_SPREAD) names.push(selection.name.value);
        else if (selection.selectionSet) pending.push(selection.selectionSet);
      }
    }
    return names;
  };
  // Selection sets open on the way down, fragments expanded: past the limit the operation is
  // refused whatever lies below, so the recursion never goes deeper than the limit.
  let open = 0;
  function selectionSetDepth(selectionSet: SelectionSetNode): number {
    if (open >= limit) return limit + 1;
    open++;
    try {
      return 1 + deepestSelection(selectionSet);
    } finally {
      open--;
    }
  }
  function deepestSelection(selectionSet: SelectionSetNode): number {
    let deepest = 0;
    for (const selection of selectionSet.selections) {
      let depth = 0;
      for (const directive of selection.directives ?? []) depth = Math.max(depth, argumentsDepth(directive.arguments));
      if (selection.kind === Kind.FIELD) {
        depth = Math.max(depth, argumentsDepth(selection.arguments));
        if (selection.selectionSet) depth = Math.max(depth, selectionSetDepth(selection.selectionSet));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        depth = Math.max(depth, selectionSetDepth(selection.selectionSet));
      } else {
        depth = Math.max(depth, fragmentDepth(selection.name.value));
      }
      if (depth > deepest) {
        deepest = depth;
        // Past the limit the exact figure no longer matters; stopping keeps the recursion short.
        if (deepest >= limit) break;
      }
    }
    return deepest;
  }

  const visited = new Set<string>();
  for (const [first, firstSet] of fragments) {
    if (visited.has(first)) continue;
    visited.add(first);
    const path = [{ name: first, selectionSet: firstSet, spreads: spreadsIn(firstSet), next: 0 }];
    for (let top = path[0]; top !== undefined; top = path[path.length - 1]) {
      const child = top.spreads[top.next++];
      if (child !== undefined) {
        const selectionSet = fragments.get(child);
        if (selectionSet === undefined || visited.has(child)) continue;
        visited.add(child);
        path.push({ name: child, selectionSet, spreads: spreadsIn(selectionSet), next: 0 });
      } else {
        path.pop();
        known.set(top.name, deepestSelection(top.selectionSet));
      }
    }
  }
  let deepest = 0;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    deepest = Math.max(deepest, selectionSetDepth(definition.selectionSet));
    if (deepest > limit) break;
  }
  return deepest;
}

/**
 * A GET (or form) request whose `variables` or `extensions` parameter is not JSON is a client's
 * mistake: 400 `BAD_REQUEST` naming the parameter, as a POST body that is not JSON is answered.
 * (Yoga's parser throws the JSON parser's own error, answered 500 and logged with the text,
 * which is the client's variables.)
 */
export function useRequestParameterJson(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (requestParser === undefined) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          const params = new URL(request.url).searchParams;
          // A form's parameters are in its body, read by now: then either may be the one.
          const name = ['variables', 'extensions'].find((key) => !isJsonText(params.get(key)));
          const which = name === undefined ? 'the "variables" or "extensions" parameter' : `the "${name}" parameter`;
          throw limitError(`${which} of the request is not JSON`, 'BAD_REQUEST', 400);
        }
      });
    },
  };
}

function isJsonText(text: string | null): boolean {
  if (text === null) return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
