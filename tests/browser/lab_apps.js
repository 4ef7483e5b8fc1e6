/*
 * A web app in main1 as a JupyterLab tab, in headless Chromium against a real
 * `jupyter lab` and Docker. Started by tests/browser/test_lab_apps.py, which
 * launches the session (its app declared), starts the app in main1, reads
 * results.json and cleans up. Given SESSION_ID, APP_NAME, APP_PORT and
 * CLOSED_PORT, it clicks the app's button in the Cluster Sessions sidebar, waits
 * for the page to render in the tab's iframe and for its WebSocket's answer
 * (the page writes it into #echo), then opens CLOSED_PORT with the command
 * "Open Port in main1…" and reads the proxy's 502 page in that tab.
 */

'use strict';

const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const REPO = path.resolve(__dirname, '..', '..');
const { chromium } = createRequire(
  path.join(REPO, 'labextension', 'package.json')
)('playwright-core');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const SESSION_ID = process.env.SESSION_ID;
const APP_NAME = process.env.APP_NAME;
const APP_PORT = Number(process.env.APP_PORT);
const CLOSED_PORT = Number(process.env.CLOSED_PORT);
const ARTIFACTS = process.env.ARTIFACTS;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

const results = { ok: false, steps: [], outputs: {}, consoleErrors: [] };

async function main(context) {
  const page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', error => results.consoleErrors.push(String(error)));
  const step = async (name, body) => {
    const entry = { name, ok: false };
    results.steps.push(entry);
    await body();
    entry.ok = true;
  };
  const shot = name =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

  await step('open-lab', async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page.locator('.jp-LauncherCard').first().waitFor();
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
  });

  await step('app-tab', async () => {
    const item = `.jp-ClusterSession[data-session-id="${SESSION_ID}"]`;
    const app = page.locator(`${item} [data-app="${APP_NAME}"]`);
    await app.waitFor({ timeout: 120000 });
    results.outputs.button = await app.textContent();
    await app.locator('.jp-ClusterApp-open').click();
    const tab = page.locator(
      `[id="jp-ClusterApp-${SESSION_ID}-${APP_PORT}"] iframe`
    );
    await tab.waitFor();
    results.outputs.src = await tab.getAttribute('src');
    const frame = page.frameLocator(
      `[id="jp-ClusterApp-${SESSION_ID}-${APP_PORT}"] iframe`
    );
    results.outputs.heading = await frame.locator('#app').textContent();
    await frame
      .locator('#echo', { hasText: 'echo:ping' })
      .waitFor({ timeout: 30000 });
    results.outputs.echo = await frame.locator('#echo').textContent();
    results.outputs.tabLabels = await page.evaluate(() =>
      [...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tabLabel')]
        .map(n => n.textContent)
    );
    await shot('app-tab');
  });

  await step('closed-port', async () => {
    await page.evaluate(
      ([sessionId, port]) =>
        window.jupyterapp.commands.execute('cluster:open-app', {
          sessionId,
          port
        }),
      [SESSION_ID, CLOSED_PORT]
    );
    const frame = page.frameLocator(
      `[id="jp-ClusterApp-${SESSION_ID}-${CLOSED_PORT}"] iframe`
    );
    const heading = frame.locator('h1');
    await heading.waitFor();
    results.outputs.closed = await heading.textContent();
    await shot('app-closed-port');
  });
  results.ok = true;
}

(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const userDataDir = fs.mkdtempSync(path.join(ARTIFACTS, '.chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
    viewport: { width: 1280, height: 800 }
  });
  context.setDefaultTimeout(60000);
  try {
    await main(context);
  } catch (error) {
    results.error = String(error.stack || error);
  } finally {
    await context.close().catch(() => undefined);
    fs.rmSync(userDataDir, { recursive: true, force: true });
    fs.writeFileSync(
      path.join(ARTIFACTS, 'results.json'),
      JSON.stringify(results, null, 2)
    );
    process.exit(results.ok ? 0 : 1);
  }
})();
