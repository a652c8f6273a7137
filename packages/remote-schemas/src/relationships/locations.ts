import { GraphQLError, Kind, parse, type ASTNode, type DocumentNode, type ExecutionResult, type Location } from 'graphql';
import { offsetOf } from '../errors.js';

/**
 * Locations of a document the gateway derived from the client's (the base of a join plan: the
 * client's nodes copied, a few of ours added) and printed: the offset of each node in the printed
 * text -> where the client wrote it. Our own nodes have no place in the client's document.
 */
interface PrintedPlaces {
  readonly text: string;
  readonly places: ReadonlyMap<number, Location>;
}

const cache = new WeakMap<DocumentNode, PrintedPlaces>();

/** Walks two documents of the same shape (one the parse of the other's print) side by side. */
function pair(derived: ASTNode, printed: ASTNode, places: Map<number, Location>): void {
  if (derived.kind !== printed.kind) return;
  if (derived.loc && printed.loc) places.set(printed.loc.start, derived.loc);
  for (const key of ['definitions', 'selections', 'arguments', 'directives', 'variableDefinitions'] as const) {
    const a = (derived as unknown as Record<string, readonly ASTNode[] | undefined>)[key];
    const b = (printed as unknown as Record<string, readonly ASTNode[] | undefined>)[key];
    if (a && b) for (let i = 0; i < Math.min(a.length, b.length); i++) pair(a[i]!, b[i]!, places);
  }
  for (const key of ['selectionSet', 'value', 'name'] as const) {
    const a = (derived as unknown as Record<string, ASTNode | undefined>)[key];
    const b = (printed as unknown as Record<string, ASTNode | undefined>)[key];
    if (a && b && typeof a === 'object' && 'kind' in a && a.kind !== Kind.NAME) pair(a, b, places);
  }
}

function placesOf(document: DocumentNode, text: string): PrintedPlaces {
  let known = cache.get(document);
  if (!known || known.text !== text) {
    const places = new Map<number, Location>();
    pair(document, parse(text), places);
    known = { text, places };
    cache.set(document, known);
  }
  return known;
}

/**
 * `result` (the answer to `document` printed as `text`) with the locations of its errors moved
 * into the client's document; a location that points at a node of ours is left out.
 */
export function clientLocations(result: ExecutionResult, document: DocumentNode, text: string): ExecutionResult {
  if (!result.errors?.some((error) => error.locations?.length)) return result;
  const { places } = placesOf(document, text);
  const errors = result.errors.map((error) => {
    if (!error.locations?.length) return error;
    const found: Location[] = [];
    for (const { line, column } of error.locations) {
      const offset = offsetOf(text, line, column);
      const place = offset === undefined ? undefined : places.get(offset);
      if (place) found.push(place);
    }
    const source = found[0]?.source;
    return new GraphQLError(error.message, {
      ...(source ? { source, positions: found.map((place) => place.start) } : {}),
      ...(error.path ? { path: error.path } : {}),
      ...(error.extensions && Object.keys(error.extensions).length > 0 ? { extensions: error.extensions } : {}),
    });
  });
  return { ...result, errors };
}
