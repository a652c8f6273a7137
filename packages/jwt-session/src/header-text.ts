/** What a session variable must be to travel to a remote as a header (name, value). */

/** What HTTP allows in a header name (a token), lower case. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/** C0 controls but tab, and DEL: no HTTP header value can carry them. */
const HEADER_CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Whether `lowerCaseName` can be a header's name. */
export function isHeaderName(lowerCaseName: string): boolean {
  return HEADER_NAME.test(lowerCaseName);
}

/** Whether `value` can be a header's value (characters beyond ASCII go as UTF-8 bytes). */
export function isHeaderValue(value: string): boolean {
  return !HEADER_CONTROLS.test(value);
}
