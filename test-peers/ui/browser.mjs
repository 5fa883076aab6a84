// The browser the UI scripts drive: BROWSER=chromium (the default) or BROWSER=firefox; the binary in
// BROWSER_BIN (CHROMIUM is still read for chromium). Both are Debian's stock builds, and neither
// driver downloads a browser of its own:
// - chromium: playwright-core over CDP, as before;
// - firefox-esr: puppeteer-core over WebDriver BiDi, which stock Firefox speaks. Playwright's own
//   Firefox is a patched build that cannot be had here, and playwright-core 1.65.2's BiDi channel
//   ("moz-firefox") sends emulation.setMediaFeaturesOverride on every new context, which Firefox
//   153 ESR does not know ("unknown command"): no page can be opened with it.
// open() gives both the same small page API (the subset of Playwright's the scripts use), so one
// script per page serves both browsers.
// Neither may ask any other host for anything: Chromium's background networking is off by flags,
// Firefox's by the prefs below.
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';

export const BROWSER = process.env.BROWSER || 'chromium';

// Firefox's background networking, off: telemetry and health reports, updates (app, add-ons,
// search, GMP/OpenH264), captive portal and connectivity checks, safe browsing, remote settings
// and Normandy, DNS prefetch/speculative connects, push, geolocation, Pocket, new tab feeds.
// A closed proxy catches anything left: only loopback bypasses it (Firefox never proxies
// localhost/127.0.0.1), so a request to another host fails here instead of leaving the machine.
export const FIREFOX_PREFS = {
  'toolkit.telemetry.enabled': false,
  'toolkit.telemetry.unified': false,
  'toolkit.telemetry.archive.enabled': false,
  'toolkit.telemetry.server': '',
  'toolkit.telemetry.updatePing.enabled': false,
  'toolkit.telemetry.shutdownPingSender.enabled': false,
  'toolkit.telemetry.firstShutdownPing.enabled': false,
  'toolkit.telemetry.newProfilePing.enabled': false,
  'toolkit.telemetry.bhrPing.enabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'datareporting.healthreport.uploadEnabled': false,
  'app.update.enabled': false,
  'app.update.auto': false,
  'app.update.checkInstallTime': false,
  'app.normandy.enabled': false,
  'app.normandy.api_url': '',
  'app.shield.optoutstudies.enabled': false,
  'messaging-system.rsexperimentloader.enabled': false,
  'services.settings.server': 'http://127.0.0.1:9/none',
  'services.settings.poll_interval': 86400 * 365,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'captivedetect.canonicalURL': '',
  'network.dns.disablePrefetch': true,
  'network.prefetch-next': false,
  'network.predictor.enabled': false,
  'network.http.speculative-parallel-limit': 0,
  'network.trr.mode': 5,
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'browser.safebrowsing.downloads.enabled': false,
  'browser.safebrowsing.downloads.remote.enabled': false,
  'browser.safebrowsing.blockedURIs.enabled': false,
  'browser.safebrowsing.provider.google4.updateURL': '',
  'browser.safebrowsing.provider.google.updateURL': '',
  'browser.safebrowsing.provider.mozilla.updateURL': '',
  'browser.search.update': false,
  'browser.search.geoip.url': '',
  'browser.region.network.url': '',
  'browser.region.update.enabled': false,
  'browser.newtabpage.enabled': false,
  'browser.newtabpage.activity-stream.feeds.telemetry': false,
  'browser.newtabpage.activity-stream.telemetry': false,
  'browser.newtabpage.activity-stream.feeds.section.topstories': false,
  'browser.newtabpage.activity-stream.feeds.snippets': false,
  'browser.ping-centre.telemetry': false,
  'browser.topsites.contile.enabled': false,
  'extensions.pocket.enabled': false,
  'extensions.update.enabled': false,
  'extensions.getAddons.cache.enabled': false,
  'extensions.systemAddon.update.enabled': false,
  'extensions.blocklist.enabled': false,
  'media.gmp-manager.updateEnabled': false,
  'media.gmp-gmpopenh264.enabled': false,
  'media.gmp-widevinecdm.enabled': false,
  'dom.push.enabled': false,
  'dom.push.connection.enabled': false,
  'geo.enabled': false,
  'geo.provider.network.url': '',
  'identity.fxaccounts.enabled': false,
  'security.OCSP.enabled': 0,
  'security.remote_settings.crlite_filters.enabled': false,
  'security.remote_settings.intermediates.enabled': false,
  'network.proxy.type': 1,
  'network.proxy.http': '127.0.0.1',
  'network.proxy.http_port': 9,
  'network.proxy.ssl': '127.0.0.1',
  'network.proxy.ssl_port': 9,
  'network.proxy.socks': '127.0.0.1',
  'network.proxy.socks_port': 9,
  'network.proxy.socks_remote_dns': true,
  'network.proxy.no_proxies_on': 'localhost, 127.0.0.1',
};

// A release build ignores services.settings.server (remote settings) unless this is set: without it
// Firefox asked firefox.settings.services.mozilla.com 140 times in 30 s (caught by the proxy above),
// with it nothing at all.
const FIREFOX_ENV = { ...process.env, MOZ_REMOTE_SETTINGS_DEVTOOLS: '1' };

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync'];

/** The binary: BROWSER_BIN, else CHROMIUM for chromium, else the Debian path. */
function executable() {
  if (process.env.BROWSER_BIN) return process.env.BROWSER_BIN;
  if (BROWSER === 'chromium') return process.env.CHROMIUM || '/usr/bin/chromium';
  return '/usr/bin/firefox-esr';
}

/**
 * Launches the browser BROWSER names, headless, with a new empty profile, and opens one page:
 * {browser, page, close()}. The page has Playwright's API for chromium and the same subset over
 * puppeteer-core for firefox.
 */
export async function open({ viewport, offline = false }) {
  if (BROWSER === 'chromium') {
    const browser = await chromium.launch({ executablePath: executable(), args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport, offline });
    return { version: browser.version(), page: await context.newPage(), close: () => browser.close() };
  }
  if (BROWSER === 'firefox') {
    const browser = await puppeteer.launch({ browser: 'firefox', executablePath: executable(), headless: true,
      extraPrefsFirefox: FIREFOX_PREFS, env: FIREFOX_ENV }); // offline: the prefs' closed proxy stops any other host
    const page = (await browser.pages())[0] || await browser.newPage();
    await page.setViewport(viewport);
    return { version: await browser.version(), page: playwrightLike(page), close: () => browser.close() };
  }
  throw new Error('BROWSER must be chromium or firefox, not ' + BROWSER);
}

/** The subset of Playwright's Page the scripts use, over a puppeteer Page. */
function playwrightLike(p) {
  return {
    on: (event, handler) => p.on(event, handler),
    goto: (url) => p.goto(url),
    url: () => p.url(),
    title: () => p.title(),
    waitForSelector: (selector, options) => p.waitForSelector(selector, options),
    waitForFunction: (fn, arg, options) => p.waitForFunction(fn, { polling: 50, ...options }, arg),
    evaluate: (fn, arg) => p.evaluate(fn, arg),
    $eval: (selector, fn, arg) => p.$eval(selector, fn, arg),
    $$eval: (selector, fn, arg) => p.$$eval(selector, fn, arg),
    textContent: (selector) => p.$eval(selector, (e) => e.textContent),
    inputValue: (selector) => p.$eval(selector, (e) => e.value),
    fill: (selector, value) => p.locator(selector).fill(value),
    click: (selector) => p.locator(selector).click(),
    selectOption: (selector, value) => p.select(selector, value),
    locator: (selector) => ({ scrollIntoViewIfNeeded: () => p.$eval(selector, (e) => e.scrollIntoView({ block: 'nearest' })) }),
    screenshot: (options) => p.screenshot(options),
  };
}

