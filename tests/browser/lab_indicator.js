/*
 * A notebook's toolbar names the cluster session it runs in, in headless
 * Chromium against a real `jupyter lab` and Docker. Started by
 * tests/browser/test_lab_indicator.py, which launches the session (with a
 * kernel) through REST, reads results.json and cleans up. Given SESSION_ID, it
 * opens a notebook on the session's kernel (the command "Open Notebook on
 * Cluster Session…"), reads the toolbar's kernel name and the cluster item
 * next to it, clicks the item and sees the session marked in the sidebar.
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
  const indicator = `.jp-NotebookPanel:not(.lm-mod-hidden) .jp-ClusterKernelIndicator[data-session-id="${SESSION_ID}"]`;
  const row = `#jp-cluster-sessions .jp-ClusterSession[data-session-id="${SESSION_ID}"]`;

  await step('open-lab', async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page.locator('.jp-LauncherCard').first().waitFor();
    // The file browser in front: the click must bring the sidebar.
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('filebrowser')
    );
  });

  await step('notebook-indicator', async () => {
    await page.evaluate(
      sessionId =>
        window.jupyterapp.commands.execute('cluster:open-notebook', {
          sessionId
        }),
      SESSION_ID
    );
    const item = page.locator(indicator);
    await item.waitFor({ state: 'visible', timeout: 120000 });
    await page
      .locator(`${indicator}[data-status="RUNNING"]`)
      .waitFor({ timeout: 60000 });
    results.outputs.label = await item
      .locator('.jp-ClusterKernelIndicator-label')
      .textContent();
    results.outputs.status = await item
      .locator('.jp-ClusterKernelIndicator-status')
      .textContent();
    // The kernelspec's name, if the toolbar has room for it.
    results.outputs.kernelName = await page.evaluate(
      () =>
        document.querySelector(
          '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar .jp-KernelName'
        )?.textContent ?? null
    );
    results.outputs.sidebarVisibleBefore = await page
      .locator('#jp-cluster-sessions')
      .isVisible();
    await shot('notebook-indicator');
  });

  await step('reveal-in-sidebar', async () => {
    await page.locator(indicator).click();
    await page.locator(`${row}.jp-mod-highlighted`).waitFor({ timeout: 10000 });
    results.outputs.sidebarVisibleAfter = await page
      .locator('#jp-cluster-sessions')
      .isVisible();
    results.outputs.rowName = await page
      .locator(`${row} .jp-ClusterSession-name`)
      .textContent();
    await shot('notebook-indicator-revealed');
  });
  results.ok = true;
}

/** What the page shows when a step failed: a screenshot and the items found. */
async function explain(context) {
  const page = context.pages()[0];
  if (!page) {
    return;
  }
  await page
    .screenshot({ path: path.join(ARTIFACTS, 'failed.png') })
    .catch(() => undefined);
  results.outputs.itemsFound = await page
    .evaluate(() =>
      [...document.querySelectorAll('.jp-ClusterKernelIndicator')].map(n => ({
        session: n.dataset.sessionId,
        hidden: n.classList.contains('lm-mod-hidden'),
        text: n.textContent
      }))
    )
    .catch(error => String(error));
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
    await explain(context);
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
