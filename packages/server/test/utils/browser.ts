import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); Playwright never downloads a browser here. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for (requests and WebSockets). */
  requested: string[];
  /** Page errors and Content-Security-Policy refusals seen in the console. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * Headless Chromium with a new empty profile, as on a machine without internet access: no name
 * but 127.0.0.1 resolves, so a file fetched from anywhere else fails and is listed in `requested`.
 */
export async function launchBrowser(options: { viewport?: { width: number; height: number } } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-graphql-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: options.viewport ?? { width: 1280, height: 860 },
    acceptDownloads: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
  const requested: string[] = [];
  const problems: string[] = [];
  context.on('request', (request) => requested.push(request.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
  page.on('websocket', (socket) => requested.push(socket.url()));
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  return {
    context,
    page,
    requested,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The text of Monaco editors matching `selector`, whitespace collapsed (Monaco writes spaces as U+00A0). */
export async function editorText(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).innerText()).replace(/\s+/g, ' ');
}

/**
 * Types into the focused Monaco editor as a user does: the editor adds closing brackets and quotes
 * of its own, which are cut off after the text (Escape closes a suggestion list first). Whether a
 * typed closing bracket overtypes the editor's own depends on when the editor handles the keys, so
 * the text is typed again (at most 5 times) until the editor shows it.
 */
export async function typeInEditor(page: Page, text: string, selector: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Shift+ControlOrMeta+End');
    await page.keyboard.press('Delete');
    if ((await editorText(page, selector)) === text) return;
    await page.waitForTimeout(250);
  }
}

/** The URLs of `requested` that are not of `origin` (`data:` URLs aside). */
export function elsewhere(requested: readonly string[], origin: string): string[] {
  const host = new URL(origin).host;
  return requested.filter((url) => !url.startsWith('data:') && !url.startsWith('blob:') && new URL(url).host !== host);
}
