import { parse, visit, type ASTNode, type DocumentNode, type Source } from 'graphql';

/**
 * Where the text sent to a remote came from in the client's document: a location a remote reports
 * (line and column in the text it received) becomes a position in the client's own source, so
 * that errors point at what the client wrote, never at a document the gateway wrote.
 */
export interface SentLocations {
  /** The client's source; `undefined`: nothing can be placed in it. */
  readonly source: Source | undefined;
  /**
   * The position in `source` of `line`, `column` (1-based, as GraphQL errors give them) of the
   * sent text; `undefined` when that place is nothing the client wrote.
   */
  position(line: number, column: number): number | undefined;
}

const LINE_BREAK = /\r\n|[\n\r]/g;

/**
 * The offset of `line`, `column` in `body`, lines broken as graphql-js breaks them (`\r\n`, `\n`
 * or `\r`); `undefined` when the text has no such place.
 */
export function offsetOf(body: string, line: number, column: number): number | undefined {
  if (!Number.isInteger(line) || !Number.isInteger(column) || line < 1 || column < 1) return undefined;
  let start = 0;
  if (line > 1) {
    LINE_BREAK.lastIndex = 0;
    let current = 1;
    for (let match = LINE_BREAK.exec(body); match; match = LINE_BREAK.exec(body)) {
      current++;
      if (current === line) {
        start = match.index + match[0].length;
        break;
      }
    }
    if (current !== line) return undefined;
  }
  const position = start + column - 1;
  return position <= body.length ? position : undefined;
}

/** The client's own text was sent: its locations are the client's. */
export function clientTextLocations(source: Source): SentLocations {
  return { source, position: (line, column) => offsetOf(source.body, line, column) };
}

/**
 * `text`, the printed `document`, whose nodes copied from the client's document kept their
 * `loc` in `source`. The table from printed positions to the client's is built on the first
 * question (a remote's error with locations), by walking `document` next to `text` parsed again:
 * a request that meets no such error pays nothing for it.
 */
export class PrintedLocations implements SentLocations {
  readonly source: Source | undefined;
  readonly #document: DocumentNode;
  readonly #text: string;
  /** Printed start offsets, ascending, and the client's start offset of the node there. */
  #table: { printed: number[]; client: number[] } | undefined;

  constructor(document: DocumentNode, text: string, source: Source | undefined) {
    this.#document = document;
    this.#text = text;
    this.source = source;
  }

  position(line: number, column: number): number | undefined {
    const offset = offsetOf(this.#text, line, column);
    if (offset === undefined) return undefined;
    return this.positionAt(offset);
  }

  /** The client's position of the node that starts at `offset` of the printed text. */
  positionAt(offset: number): number | undefined {
    const table = (this.#table ??= this.#build());
    let low = 0;
    let high = table.printed.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = table.printed[middle]!;
      if (at === offset) return table.client[middle];
      if (at < offset) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  #build(): { printed: number[]; client: number[] } {
    const table = { printed: [] as number[], client: [] as number[] };
    if (!this.source) return table;
    let reparsed: DocumentNode;
    try {
      reparsed = parse(this.#text);
    } catch {
      return table;
    }
    const printedNodes = nodesOf(reparsed);
    const originals = nodesOf(this.#document);
    // The text is `print(document)`: the same nodes in the same order, or nothing is mapped.
    if (printedNodes.length !== originals.length) return table;
    let last = -1;
    for (let i = 0; i < printedNodes.length; i++) {
      const printed = printedNodes[i]!;
      const original = originals[i]!;
      if (printed.kind !== original.kind) return { printed: [], client: [] };
      const at = printed.loc?.start;
      // The outermost node the client wrote among those that start at one place of the text.
      if (at === undefined || at <= last || original.loc?.source !== this.source) continue;
      table.printed.push(at);
      table.client.push(original.loc.start);
      last = at;
    }
    return table;
  }
}

function nodesOf(document: DocumentNode): ASTNode[] {
  const nodes: ASTNode[] = [];
  visit(document, {
    enter(node) {
      nodes.push(node);
    },
  });
  return nodes;
}

/**
 * A printed text in which values were put in place of markers (presets' session values, per
 * request): positions are moved back to the text with the markers, whose locations `base` knows.
 * `pieces[i]` is followed by `values[i]` in the sent text and by `markers[i]` characters of marker
 * in the printed one.
 */
export class SplicedLocations implements SentLocations {
  readonly #base: PrintedLocations;
  readonly #text: string;
  readonly #pieces: readonly string[];
  readonly #values: readonly string[];
  readonly #markers: readonly number[];

  constructor(base: PrintedLocations, text: string, pieces: readonly string[], values: readonly string[], markers: readonly number[]) {
    this.#base = base;
    this.#text = text;
    this.#pieces = pieces;
    this.#values = values;
    this.#markers = markers;
  }

  get source(): Source | undefined {
    return this.#base.source;
  }

  position(line: number, column: number): number | undefined {
    const offset = offsetOf(this.#text, line, column);
    if (offset === undefined) return undefined;
    let sent = 0;
    let printed = 0;
    for (let i = 0; i < this.#pieces.length; i++) {
      const piece = this.#pieces[i]!.length;
      if (offset < sent + piece) return this.#base.positionAt(printed + offset - sent);
      sent += piece;
      printed += piece;
      if (i === this.#values.length) break;
      const value = this.#values[i]!.length;
      // Inside a session value: the place of the preset, which the client did not write.
      if (offset < sent + value) return undefined;
      sent += value;
      printed += this.#markers[i]!;
    }
    return undefined;
  }
}
