/**
 * `svc-graphql import-hasura-metadata PATH`: reads a Hasura v2 metadata export (the JSON answer of
 * `export_metadata`, or a Hasura CLI `metadata/` directory) and prints the svc-graphql metadata
 * document holding its remote schemas and their permissions, ready for `replace_metadata`, and
 * names on stderr what it left out and the environment variables the document reads. See
 * docs/migrating-from-hasura.md.
 */
import { ImportError, type ImportResult } from './convert.js';
import { importHasuraMetadata } from './read.js';

export { convertHasuraMetadata, ImportError, renamePresetSessionVariables } from './convert.js';
export type { ImportResult, SkippedKind } from './convert.js';
export { DEFAULT_IMPORT_LIMITS, importHasuraMetadata } from './read.js';
export type { ImportLimits } from './read.js';

/** The lines the command prints on stderr after the document (none when there is nothing to say). */
export function summaryLines(result: ImportResult): string[] {
  const lines: string[] = [];
  if (result.environment.length > 0) lines.push(`reads environment: ${result.environment.join(', ')}`);
  if (result.skipped.length > 0) {
    lines.push(`skipped: ${result.skipped.map(({ kind, count }) => `${String(count)} ${kind}`).join(', ')}`);
  }
  return lines;
}

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The command: prints the document on stdout and the summary on stderr, and answers the exit
 * status (0 printed, 1 with one line on stderr).
 */
export async function runImportHasuraMetadata(path: string, io: CommandIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const env = io.env ?? process.env;
  // Run as `pnpm svc-graphql …`, the script runs in the checkout's root: a relative PATH means
  // the directory the user typed it in.
  const cwd = io.cwd ?? (env['npm_lifecycle_event'] === 'svc-graphql' && env['INIT_CWD'] ? env['INIT_CWD'] : process.cwd());
  let result: ImportResult;
  let text: string;
  try {
    result = await importHasuraMetadata(path, { cwd });
    // Written out inside the try: a document nested deep enough exhausts JSON.stringify's stack too.
    text = JSON.stringify(result.document, null, 2);
  } catch (error) {
    let where = path;
    let message: string;
    if (error instanceof ImportError) {
      where = error.where;
      message = error.message;
    } else if (error instanceof RangeError) {
      // Call stack exhausted by a hostile nesting depth.
      message = 'nested too deeply';
    } else {
      message = error instanceof Error ? error.message : String(error);
    }
    io.stderr.write(`Fatal error: ${where}: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return 1;
  }
  io.stdout.write(`${text}\n`);
  for (const line of summaryLines(result)) io.stderr.write(`${line}\n`);
  return 0;
}
