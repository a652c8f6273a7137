/** One Server-Sent Event: its `event:` name and its `data:` lines joined. */
export interface SseEvent {
  readonly event: string | undefined;
  readonly data: string;
}

export interface SseAnswer {
  readonly status: number;
  readonly contentType: string | null;
  /** Every event up to the end of the stream, comments (Yoga's keep-alive pings) left out. */
  readonly events: SseEvent[];
}

/**
 * POSTs a GraphQL subscription with `Accept: text/event-stream` and reads the answer with a real
 * fetch until the server closes the stream.
 */
export async function subscribeOverSse(url: string, query: string, headers: Record<string, string> = {}): Promise<SseAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
  });
  const events: SseEvent[] = [];
  let buffer = '';
  const flush = (block: string): void => {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':') || line === '') continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (event !== undefined || data.length > 0) events.push({ event, data: data.join('\n') });
  };
  const decoder = new TextDecoder();
  const reader = response.body?.getReader();
  for (;;) {
    const chunk = await reader?.read();
    if (chunk === undefined || chunk.done) break;
    buffer += decoder.decode(chunk.value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      flush(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  }
  if (buffer.trim() !== '') flush(buffer);
  return { status: response.status, contentType: response.headers.get('content-type'), events };
}
