/**
 * The allow list as a precomputed table: every allowed document's canonical text is hashed once,
 * when the metadata changes, so that checking a request costs one hash-table lookup of its own
 * document's key (itself computed once per distinct document, see document-facts.ts), never a
 * comparison with each allowed query.
 */
import { createHash } from 'node:crypto';
import { parse, type DocumentNode } from 'graphql';
import type { AllowlistEntryMetadata, QueryCollectionMetadata } from '@svc-graphql/metadata-api';
import { canonicalDocument } from './canonical-document.js';

/** The allow-list key of a parsed document: SHA-256 of its canonical text; `undefined` when it has none (it is then never allowed). */
export function allowlistKey(document: DocumentNode): string | undefined {
  const canonical = canonicalDocument(document);
  return canonical === undefined ? undefined : createHash('sha256').update(canonical).digest('base64');
}

/** Who may run one allowed document: every role, or the roles listed. */
interface Grant {
  global: boolean;
  roles: Set<string>;
}

export interface AllowlistTable {
  /** Distinct allowed documents. */
  readonly size: number;
  /** Whether a document of this key may run as `role` (admin is not checked here: the caller lets it through). */
  allows(key: string | undefined, role: string): boolean;
  /** The key of each collection query's text (reused by the next table built from this one). */
  readonly keyByText: ReadonlyMap<string, string | undefined>;
}

/** The parts of the metadata document the table is built from. */
export interface AllowlistMetadata {
  query_collections?: readonly QueryCollectionMetadata[] | undefined;
  allowlist?: readonly AllowlistEntryMetadata[] | undefined;
}

function keyOfText(text: string): string | undefined {
  try {
    return allowlistKey(parse(text, { noLocation: true }));
  } catch {
    // The metadata API refuses queries that do not parse; one that does not is simply never allowed.
    return undefined;
  }
}

/**
 * Builds the table of the collections in the allow list, globally or for their roles. `previous`
 * (the table this one replaces) lends the keys of query texts it already hashed, so a change of
 * the metadata costs the parsing of the new queries only.
 */
export function createAllowlistTable(metadata: AllowlistMetadata, previous?: AllowlistTable): AllowlistTable {
  const collections = new Map((metadata.query_collections ?? []).map((collection) => [collection.name, collection]));
  const grants = new Map<string, Grant>();
  const keyByText = new Map<string, string | undefined>();
  for (const entry of metadata.allowlist ?? []) {
    const collection = collections.get(entry.collection);
    if (collection === undefined) continue;
    for (const { query } of collection.definition.queries) {
      let key = keyByText.get(query);
      if (!keyByText.has(query)) {
        key = previous?.keyByText.has(query) ? previous.keyByText.get(query) : keyOfText(query);
        keyByText.set(query, key);
      }
      if (key === undefined) continue;
      let grant = grants.get(key);
      if (grant === undefined) {
        grant = { global: false, roles: new Set() };
        grants.set(key, grant);
      }
      if (entry.scope === undefined) grant.global = true;
      else for (const role of entry.scope.roles) grant.roles.add(role);
    }
  }
  return {
    size: grants.size,
    keyByText,
    allows(key, role) {
      if (key === undefined) return false;
      const grant = grants.get(key);
      return grant !== undefined && (grant.global || grant.roles.has(role));
    },
  };
}
