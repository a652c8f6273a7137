/** One server-sent event: its `event:` name and its `data:` (parsed as JSON when there is some). */
export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * Opens a GraphQL subscription over SSE (Yoga's "distinct connections" mode: a POST answered with
 * `text/event-stream`) and hands out its events one by one, `next` and `complete` alike.
 */
export async function openSse(
  url: string,
  body: { query: string; variables?: unknown },
  headers: Record<string, string> = {},
): Promise<{ status: number; next(): Promise<SseEvent | undefined>; close(): Promise<void> }> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const next = async (): Promise<SseEvent | undefined> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        // Comments (`:`) keep the connection alive: not events.
        if (data.length === 0 && event === 'message') continue;
        const text = data.join('\n');
        return { event, data: text === '' ? undefined : (JSON.parse(text) as unknown) };
      }
      const chunk = await reader.read();
      if (chunk.done) return undefined;
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    status: response.status,
    next,
    close: async () => {
      controller.abort();
      await reader.cancel().catch(() => {});
    },
  };
}
