/**
 * A remote's URL as shown to anyone but admin, and in logs: without user, password, query string or
 * fragment, which may carry credentials (`https://u:p@api.example.com/graphql?key=secret#x` →
 * `https://api.example.com/graphql`). A URL that has none of them is kept exactly as configured.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<invalid URL>';
  }
  if (parsed.username === '' && parsed.password === '' && parsed.search === '' && parsed.hash === '') {
    // `new URL('?')` has an empty search too: only a URL without `@`, `?` and `#` is kept as it is.
    if (!/[@?#]/.test(url)) return url;
  }
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

const URL_IN_TEXT = /\b(?:https?|wss?):\/\/[^\s"'<>]+/gi;

/** Every http(s) and ws(s) URL in `text` redacted as by `redactUrl`, for log lines built from messages. */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, (url) => redactUrl(url));
}
