export { BodyTooLargeError, BoundedBody, declaredTooLarge, readBoundedText } from './bounded-body.js';
export type { BodySource, ReadBoundedOptions } from './bounded-body.js';
