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

const { runInLab } = require('./lab_runner');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const SESSION_ID = process.env.SESSION_ID;
const APP_NAME = process.env.APP_NAME;
const APP_PORT = Number(process.env.APP_PORT);
const CLOSED_PORT = Number(process.env.CLOSED_PORT);

runInLab(async ({ page, step, shot, results }) => {
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
      [
        ...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tabLabel')
      ].map(n => n.textContent)
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
});
