// Calls to POST /v1/metadata, timed from this process.

export interface MetadataCall {
  readonly ok: boolean;
  readonly status: number;
  readonly body: string;
  /** Milliseconds from sending the request to the whole response body. */
  readonly ms: number;
}

export async function metadata(baseUrl: string, adminSecret: string, type: string, args: object): Promise<MetadataCall> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': adminSecret },
    body: JSON.stringify({ type, args }),
  });
  const body = await response.text();
  const ms = performance.now() - started;
  let ok = response.status === 200;
  if (ok) {
    try {
      ok = (JSON.parse(body) as { message?: unknown }).message === 'success';
    } catch {
      ok = false;
    }
  }
  return { ok, status: response.status, body, ms };
}

/** Like `metadata`, but a failure throws with the response: the benchmark cannot go on without it. */
export async function metadataOrThrow(baseUrl: string, adminSecret: string, type: string, args: object): Promise<MetadataCall> {
  const call = await metadata(baseUrl, adminSecret, type, args);
  if (!call.ok) throw new Error(`${type} ${JSON.stringify(args)} failed: HTTP ${call.status} ${call.body.slice(0, 400)}`);
  return call;
}
