/*
 * The status bar names the current notebook's cluster session, and an admin's
 * "Cluster Admin" panel shows every session, the queue, agents, usage and
 * policies and ends a session with a reason, and the "Cluster Usage" tab shows
 * usage per user and a chart: headless Chromium against a real
 * `jupyter lab` and Docker. Started by tests/browser/test_lab_admin.py, which
 * launches RUNNING_ID (with a kernel) and WAITING_ID (PENDING), reads
 * results.json and cleans up.
 */

'use strict';

const { runInLab } = require('./lab_runner');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const RUNNING_ID = process.env.RUNNING_ID;
const WAITING_ID = process.env.WAITING_ID;
const REASON = process.env.REASON;

runInLab(async ({ page, step, shot, results }) => {
  const out = results.outputs;
  const item = `.jp-ClusterStatusItem[data-session-id="${RUNNING_ID}"]`;
  const panel = '#jp-cluster-admin';

  await step('open-lab', async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page.locator('.jp-LauncherCard').first().waitFor();
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('filebrowser')
    );
  });

  await step('status-bar', async () => {
    await page.evaluate(
      sessionId =>
        window.jupyterapp.commands.execute('cluster:open-notebook', {
          sessionId
        }),
      RUNNING_ID
    );
    await page
      .locator(`${item}[data-status="RUNNING"]`)
      .waitFor({ state: 'visible', timeout: 120000 });
    out.statusText = await page.locator(item).textContent();
    await shot('status-bar');
    await page.locator(item).click();
    await page
      .locator(
        `#jp-cluster-sessions .jp-ClusterSession[data-session-id="${RUNNING_ID}"].jp-mod-highlighted`
      )
      .waitFor({ timeout: 10000 });
    out.sidebarVisibleAfter = await page
      .locator('#jp-cluster-sessions')
      .isVisible();
  });

  await step('palette', async () => {
    await page.waitForFunction(() =>
      window.jupyterapp.commands.isVisible('cluster:admin')
    );
    await page.keyboard.press('Control+Shift+C');
    const input = page.locator('.lm-CommandPalette-input');
    await input.waitFor();
    await input.fill('Cluster Admin');
    const entry = page.locator(
      '.lm-CommandPalette-item[data-command="cluster:admin"]'
    );
    out.paletteHasAdmin = (await entry.count()) > 0;
    await entry.first().click();
    await page.locator(panel).waitFor();
  });

  await step('admin-panel', async () => {
    const rows = `${panel} .jp-ClusterAdmin-sessions tbody tr`;
    await page.waitForFunction(
      sel => document.querySelectorAll(sel).length >= 2,
      rows
    );
    await page.locator(`${panel} .jp-ClusterAdmin-usage tbody tr`).waitFor();
    await page.locator(`${panel} .jp-ClusterAgent`).first().waitFor();
    out.sessionRows = await page.$$eval(rows, trs =>
      trs.map(tr => [tr.dataset.sessionId, tr.dataset.owner])
    );
    const queued = `${panel} .jp-ClusterAdmin-queueList li`;
    out.queue = await page.$$eval(queued, lis =>
      lis.map(li => li.dataset.sessionId)
    );
    out.queueReason = await page
      .locator(`${queued} .jp-ClusterAdmin-reason`)
      .first()
      .textContent();
    out.agents = await page.$$eval(`${panel} .jp-ClusterAgent`, lis =>
      lis.map(li => li.dataset.agent)
    );
    out.usageUsers = await page.$$eval(
      `${panel} .jp-ClusterAdmin-usage tbody tr`,
      trs => trs.map(tr => tr.dataset.user)
    );
    out.policyUsers = await page.$$eval(
      `${panel} .jp-ClusterAdmin-policies details[data-user]`,
      ds => ds.map(d => d.dataset.user)
    );
    out.policiesMissing =
      (await page.locator(`${panel} [data-missing="policies"]`).count()) > 0;
    await shot('admin-panel');
  });

  await step('end-with-reason', async () => {
    await page
      .locator(
        `${panel} tr[data-session-id="${WAITING_ID}"] .jp-ClusterAdmin-end`
      )
      .click();
    const dialog = page.locator('.jp-Dialog');
    await dialog.locator('input').fill(REASON);
    await shot('admin-end-dialog');
    await dialog.locator('.jp-Dialog-button.jp-mod-accept').click();
    await page
      .locator(`${panel} tr[data-session-id="${WAITING_ID}"]`)
      .waitFor({ state: 'detached', timeout: 60000 });
    out.ended = await page.evaluate(
      async ({ url, token }) =>
        (
          await fetch(url, { headers: { Authorization: `token ${token}` } })
        ).json(),
      {
        url: new URL(`cluster/api/sessions/${WAITING_ID}`, LAB_URL).toString(),
        token: TOKEN
      }
    );
    await shot('admin-panel-ended');
  });

  await step('usage-tab', async () => {
    // "Cluster Usage", for every user: the owner of a single-user server is an
    // admin, so every user's row (with a user column) and a bar per session.
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('cluster:usage'); // a widget: not returned
    });
    const tab = '#jp-cluster-usage';
    await page.locator(`${tab} tbody tr`).first().waitFor();
    await page.locator(`${tab} .jp-ClusterUsage-chart g`).first().waitFor();
    out.usageTabUsers = await page.$$eval(`${tab} tbody tr`, trs =>
      trs.map(tr => tr.dataset.user)
    );
    out.usageTabHeader = await page.$$eval(`${tab} thead th`, ths =>
      ths.map(th => th.textContent)
    );
    out.usageTabBars = await page.$$eval(
      `${tab} .jp-ClusterUsage-chart g`,
      gs => gs.map(g => g.dataset.sessionId)
    );
    await shot('usage-tab');
  });
});
