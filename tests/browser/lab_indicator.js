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

const { runInLab } = require('./lab_runner');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const SESSION_ID = process.env.SESSION_ID;

runInLab(async ({ page, step, shot, results }) => {
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
});
