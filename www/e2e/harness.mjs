// Shared setup for the end-to-end tests: the dev server on a free port and headless Debian
// Chromium driven by playwright-core (never a downloaded browser).
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer } from '../server.mjs';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** The crate version from Cargo.toml, which the page must report. */
export function crateVersion() {
  const toml = readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8');
  const match = toml.match(/^version\s*=\s*"([^"]+)"/m);
  if (!match) throw new Error('no version in Cargo.toml');
  return match[1];
}

/** Start the server and the browser; returns {url, browser, newPage(), close()}. */
export async function launch() {
  const server = await startServer({ port: 0, mock: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  mkdirSync(ARTIFACTS, { recursive: true });
  const pages = [];
  return {
    url: server.url,
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      page.consoleLog = [];
      page.on('console', (msg) => page.consoleLog.push(`${msg.type()}: ${msg.text()}`));
      page.on('pageerror', (err) => page.consoleLog.push(`pageerror: ${err.message}`));
      pages.push(page);
      return page;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/** Open the demo page and wait until the core reports ready. */
export async function openReady(env, page) {
  await page.goto(env.url);
  try {
    await page.getByTestId('status').filter({ hasText: 'core ready' }).waitFor({ timeout: 30_000 });
  } catch (err) {
    throw new Error(`core never became ready; console:\n${page.consoleLog.join('\n')}\n${err.message}`);
  }
}

/**
 * Wait until `predicate(arg)`, evaluated in the page, resolves truthy; polls every `polling`
 * ms and throws after `timeout` ms. For async predicates: Playwright's `waitForFunction` takes
 * the promise an async predicate returns as a truthy result and so does not wait at all.
 */
export async function waitUntil(page, predicate, arg, { timeout = 10_000, polling = 200 } = {}) {
  if (predicate.constructor.name !== 'AsyncFunction') {
    throw new Error('waitUntil is for async predicates; use page.waitForFunction for others');
  }
  const end = Date.now() + timeout;
  for (;;) {
    const value = await page.evaluate(predicate, arg);
    if (value) return value;
    if (Date.now() > end) throw new Error(`waited ${timeout} ms for ${predicate}`);
    await new Promise((resolve) => setTimeout(resolve, polling));
  }
}
