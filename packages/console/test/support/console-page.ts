// What the browser tests look for on the console page, whichever browser drives it: selectors,
// viewport sizes, page-side expressions and where screenshots go. The expressions are text:
// the tests are type-checked without the DOM library, and each driver evaluates strings.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the screenshots go (gitignored). */
export const SCREENSHOTS = fileURLToPath(new URL("../../test-output/", import.meta.url));

/** The desktop viewport the console must read well at. */
export const DESKTOP = { width: 1280, height: 860 } as const;

/** A phone's viewport (390 CSS px wide, like most current phones). */
export const PHONE = { width: 390, height: 844 } as const;

/** The path of screenshot `<name>.png` under {@link SCREENSHOTS}, creating the directory. */
export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, `${name}.png`);
}

/** The list row of task `id`, optionally only while it has `status`. */
export const row = (id: string, status?: string): string =>
  `#tasks tbody tr[data-task-id="${id}"]${status ? `[data-status="${status}"]` : ""}`;

/**
 * An init script counting page loads in `window.loads` (kept in session storage): a live
 * update must not reload the page, so the count stays 1.
 */
export const COUNT_LOADS =
  'window.loads = Number(sessionStorage.getItem("loads") || "0") + 1; sessionStorage.setItem("loads", String(window.loads));';

/** The task ids of the rows on the page, top to bottom. */
export const ROW_IDS =
  'Array.from(document.querySelectorAll("#tasks tbody tr"), (r) => r.getAttribute("data-task-id") ?? "")';

/** Whether the page is wider than the viewport (a horizontal scroll bar on a phone). */
export const OVERFLOWS_HORIZONTALLY = "document.documentElement.scrollWidth > innerWidth";

/** Where the session token is kept. */
export const STORED_TOKEN = 'sessionStorage.getItem("mcp-tasks-console-token")';
