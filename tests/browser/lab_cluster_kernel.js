/*
 * The README's first steps, in headless Chromium against the Lab `make lab` starts:
 * "choose the Cluster kernel in the launcher". Started by
 * tests/browser/test_lab_cluster_kernel.py, which installed that kernelspec with
 * the Makefile's own command and reads results.json. It clicks the launcher's
 * tile named TILE (the kernelspec's display name), which opens a new notebook
 * whose kernel runs in main1 of a new session; the notebook's toolbar names that
 * session and the sidebar says its kernel runs; a cell typed as a person types
 * it says where it runs; "Shut Down Kernel" in the Kernel menu then ends the
 * kernel, and the script waits until the session is TERMINATED.
 */

'use strict';

const {
  runInLab,
  notebookKernelIdle,
  shutDownKernelFromMenu
} = require('./lab_runner');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const TILE = process.env.TILE;

runInLab(async ({ page, step, shot, results }) => {
  const visible = '.jp-NotebookPanel:not(.lm-mod-hidden)';
  // A session as the REST API gives it (the page has the token's cookie).
  const session = id =>
    page.evaluate(
      async url => {
        const response = await fetch(url);
        if (!response.ok) {
          throw new Error(`GET ${url} answered ${response.status}`);
        }
        return response.json();
      },
      new URL(`cluster/api/sessions/${id}`, LAB_URL).toString()
    );

  await step('open-lab', async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page.locator('.jp-LauncherCard').first().waitFor();
  });

  await step('tile', async () => {
    const tile = page.locator(
      `.jp-LauncherCard[data-category="Notebook"][title="${TILE}"]`
    );
    await tile.waitFor();
    await shot('launcher');
    await tile.click();
    await page.locator(visible).waitFor({ timeout: 60000 });
    await notebookKernelIdle(page, 180000);
    results.outputs.kernelId = await page.evaluate(
      () =>
        window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id
    );
    results.outputs.kernelName = await page.evaluate(
      () =>
        window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.name
    );
    // The notebook's toolbar names the session the kernel launched.
    const indicator = page.locator(
      `${visible} .jp-ClusterKernelIndicator[data-session-id]`
    );
    await indicator.waitFor({ timeout: 60000 });
    results.outputs.sessionId = await indicator.getAttribute('data-session-id');
    results.outputs.label = await indicator
      .locator('.jp-ClusterKernelIndicator-label')
      .textContent();
    // The sidebar says the session's kernel runs, and offers a notebook on it.
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    const row = page.locator(
      `.jp-ClusterSession[data-session-id="${results.outputs.sessionId}"]`
    );
    await row.waitFor();
    results.outputs.sidebarKernel = await row
      .locator('.jp-ClusterSession-kernel')
      .textContent();
    results.outputs.notebookButton = await row
      .locator('.jp-ClusterSession-notebook')
      .isEnabled();
    await shot('notebook');
  });

  await step('cell', async () => {
    await page.locator(`${visible} .jp-Cell .cm-content`).first().click();
    await page.keyboard.type(
      "import os, socket; print('AT', socket.gethostname(), " +
        "os.environ['BACKENDAI_CLUSTER_HOSTS'])"
    );
    await page.keyboard.press('Shift+Enter');
    const output = page.locator(`${visible} .jp-OutputArea-output`, {
      hasText: /^AT /
    });
    await output.first().waitFor({ timeout: 60000 });
    results.outputs.where = (await output.first().innerText()).trim();
    results.outputs.running = await session(results.outputs.sessionId);
    await shot('cell');
  });

  await step('shut-down-kernel', async () => {
    results.outputs.ended = await shutDownKernelFromMenu(page, () =>
      session(results.outputs.sessionId)
    );
    await shot('kernel-shut-down');
  });
});
