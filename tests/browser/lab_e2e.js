/*
 * End-to-end test of the JupyterLab extension in headless Chromium, against a
 * real `jupyter lab` (with the jupyter_cluster server extension) and Docker.
 * Started by tests/browser/test_lab_e2e.py, which starts the server, reads
 * results.json and cleans up; it can also be run by hand:
 *
 *   LAB_URL=http://127.0.0.1:8888/ LAB_TOKEN=… ARTIFACTS=/tmp/shots \
 *     node tests/browser/lab_e2e.js
 *
 * The server must run with --LabApp.expose_app_in_browser=True (used only to
 * switch themes), the terminal's screenReaderMode on (terminal text is read
 * from its accessibility tree) and the news prompt off.
 *
 * Under JupyterHub (tests/hub/test_lab_as_hub_user.py) it logs in as a person
 * does instead of using a token: with HUB_LOGIN_URL (the Hub's login page),
 * HUB_USER and HUB_PASSWORD it fills the Hub's login form and submits it, then
 * opens LAB_URL (the user's server, e.g. …/user/alice/); LAB_TOKEN is unused.
 *
 * It clicks what a person clicks: the "Cluster Session" launcher tile, the
 * launch dialog (size 3), a notebook on the session's kernel (a cell printing
 * BACKENDAI_CLUSTER_HOSTS and `!ssh sub2 hostname`, then JupyterLab's debugger
 * switched on and off: its variables list the kernel's), the log panel on sub1, a
 * terminal in sub1 (`hostname`), a second launch that must wait (PENDING, with
 * its reason) and is cancelled, the palette, the dark theme, and terminate from
 * the sidebar; also the live usage graphs of the running session, and the log
 * of sub1 kept after the session ended (from "Recent sessions"); last, a size-2
 * session's "Terminals" button (a terminal tab in main1 and one in sub1, each
 * asked for its `hostname`). First of all, the extension's kernelspec tile (a
 * notebook in main1 of the session it launches, ended with "Shut Down
 * Kernel"). Screenshots go to $ARTIFACTS; results.json says what was seen.
 */

'use strict';

const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');
const { watchNetwork } = require('./network_watch');
const { notebookKernelIdle, shutDownKernelFromMenu } = require('./lab_runner');

const REPO = path.resolve(__dirname, '..', '..');
const { chromium } = createRequire(
  path.join(REPO, 'labextension', 'package.json')
)('playwright-core');

const LAB_URL = process.env.LAB_URL || 'http://127.0.0.1:8888/';
const TOKEN = process.env.LAB_TOKEN || '';
const HUB_LOGIN_URL = process.env.HUB_LOGIN_URL || '';
const HUB_USER = process.env.HUB_USER || '';
const HUB_PASSWORD = process.env.HUB_PASSWORD || '';
const ARTIFACTS =
  process.env.ARTIFACTS || path.join(REPO, 'test-artifacts', 'browser');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = Number(process.env.STEP_TIMEOUT_MS || 90000);

const results = {
  ok: false,
  steps: [],
  statuses: {},
  notifications: [],
  outputs: {},
  consoleErrors: [],
  screenshots: []
};

function api(route) {
  return new URL(`cluster/api/${route}`, LAB_URL).toString();
}

/** Whether a response answers `method` on the API route (JupyterLab adds a
 * cache-busting query to every request). */
function answers(response, method, route) {
  const url = new URL(response.url());
  return (
    response.request().method() === method &&
    url.pathname === new URL(api(route)).pathname &&
    // the launch dialog's dry runs (POST sessions?dry_run=1) are not the launch
    !url.searchParams.has('dry_run')
  );
}

/**
 * Record every status the sidebar shows and every notification text in the page
 * (window.__cluster).
 */
async function installRecorder(page) {
  await page.evaluate(() => {
    const seen = {};
    const notes = [];
    window.__cluster = { seen, notes };
    const record = () => {
      document.querySelectorAll('.jp-ClusterSession').forEach(item => {
        const id = item.getAttribute('data-session-id');
        const status = item.getAttribute('data-status');
        const reason = item.querySelector('.jp-ClusterSession-reason');
        const text = status + (reason ? `: ${reason.textContent}` : '');
        const list = (seen[id] = seen[id] || []);
        if (list[list.length - 1] !== text) {
          list.push(text);
        }
      });
      document
        .querySelectorAll('.Toastify__toast .jp-toast-message')
        .forEach(n => {
          const text = (n.textContent || '').trim();
          if (text && !notes.includes(text)) {
            notes.push(text);
          }
        });
    };
    new MutationObserver(record).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
      attributeFilter: ['data-status']
    });
  });
}

async function main() {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  userDataDir = fs.mkdtempSync(path.join(ARTIFACTS, '.chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic'
    ],
    viewport: { width: 1440, height: 900 },
    acceptDownloads: true
  });
  browserContext = context;
  context.setDefaultTimeout(TIMEOUT);
  const page = context.pages()[0] || (await context.newPage());
  page.on('console', message => {
    if (message.type() === 'error') {
      results.consoleErrors.push(message.text());
    }
  });
  page.on('pageerror', error => results.consoleErrors.push(String(error)));
  await watchNetwork(page, results);
  // Every change made through the REST API, for the record.
  results.requests = [];
  const started = new Map();
  page.on('request', request => {
    if (request.url().includes('/cluster/api/') && request.method() !== 'GET') {
      started.set(request, Date.now());
    }
  });
  const finished = (request, outcome) => {
    if (started.has(request)) {
      const path = new URL(request.url()).pathname;
      const ms = Date.now() - started.get(request);
      results.requests.push(
        `${request.method()} ${path} -> ${outcome} (${ms} ms)`
      );
      started.delete(request);
    }
  };
  page.on('requestfinished', async request => {
    // The context may close between the event and this read (the last
    // request of the run); an unhandled rejection would end node before
    // results.json is written.
    const response = await request.response().catch(() => null);
    finished(request, response ? response.status() : '?');
  });
  page.on('requestfailed', request =>
    finished(request, request.failure()?.errorText)
  );

  let shotIndex = 0;
  const shot = async name => {
    shotIndex += 1;
    const file = `${String(shotIndex).padStart(2, '0')}-${name}.png`;
    await page.screenshot({ path: path.join(ARTIFACTS, file) });
    results.screenshots.push(file);
  };
  const step = async (name, fn) => {
    const started = Date.now();
    process.stdout.write(`step ${name} … `);
    try {
      await fn();
      const seconds = (Date.now() - started) / 1000;
      results.steps.push({ name, ok: true, seconds });
      process.stdout.write(`ok (${seconds.toFixed(1)} s)\n`);
    } catch (error) {
      results.steps.push({
        name,
        ok: false,
        error: String(error.stack || error)
      });
      process.stdout.write(`FAILED\n${error.stack || error}\n`);
      await shot(`FAILED-${name}`).catch(() => undefined);
      throw error;
    }
  };
  const textOf = selector =>
    page.evaluate(
      s => [...document.querySelectorAll(s)].map(n => n.textContent).join('\n'),
      selector
    );
  const waitForText = (selector, text, timeout = TIMEOUT) =>
    page.waitForFunction(
      ([s, t]) =>
        [...document.querySelectorAll(s)].some(n =>
          (n.textContent || '').includes(t)
        ),
      [selector, text],
      { timeout }
    );
  const confirmDialog = async () => {
    const button = page.locator('.jp-Dialog .jp-Dialog-button.jp-mod-warn');
    await button.waitFor();
    await button.click();
    await page.locator('.jp-Dialog').waitFor({ state: 'detached' });
  };
  // A GET of the REST API from the page, as JupyterLab makes it: with the _xsrf
  // cookie as header (JupyterHub refuses cookie-authenticated fetches without);
  // the last of several, as JupyterLab's ServerConnection takes it.
  const getJSON = url =>
    page.evaluate(async url => {
      const xsrf = document.cookie
        .split(';')
        .map(part => part.trim())
        .filter(part => part.startsWith('_xsrf='))
        .pop();
      const headers = xsrf
        ? { 'X-XSRFToken': xsrf.slice('_xsrf='.length) }
        : {};
      const response = await fetch(url, { headers });
      if (!response.ok) {
        throw new Error(`GET ${url} answered ${response.status}`);
      }
      return response.json();
    }, url);
  // A POST or DELETE of the REST API from the page (same headers as getJSON).
  const sendJSON = (method, url, body) =>
    page.evaluate(
      async ([method, url, body]) => {
        const xsrf = document.cookie
          .split(';')
          .map(part => part.trim())
          .filter(part => part.startsWith('_xsrf='))
          .pop();
        const headers = { 'Content-Type': 'application/json' };
        if (xsrf) {
          headers['X-XSRFToken'] = xsrf.slice('_xsrf='.length);
        }
        const response = await fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body)
        });
        if (!response.ok) {
          throw new Error(`${method} ${url} answered ${response.status}`);
        }
        const text = await response.text();
        return text ? JSON.parse(text) : null;
      },
      [method, url, body]
    );
  const fillField = async (name, value) => {
    await page.fill(`.jp-ClusterLaunch [name="${name}"]`, String(value));
  };

  let sessionId = null;
  let pendingId = null;
  let sessionName = null;

  if (HUB_LOGIN_URL) {
    await step('hub-login', async () => {
      await page.goto(HUB_LOGIN_URL);
      await page.locator('#username_input').fill(HUB_USER);
      await page.locator('#password_input').fill(HUB_PASSWORD);
      await shot('hub-login');
      await Promise.all([
        page.waitForURL(url => !url.pathname.endsWith('/hub/login')),
        page.locator('#login_submit').click()
      ]);
      if (!(await page.context().cookies()).length) {
        throw new Error(`no cookie after logging in; at ${page.url()}`);
      }
    });
  }

  await step('open-lab', async () => {
    const query = HUB_LOGIN_URL ? 'lab?reset' : `lab?reset&token=${TOKEN}`;
    await page.goto(new URL(query, LAB_URL).toString());
    if (HUB_LOGIN_URL && !page.url().startsWith(LAB_URL)) {
      throw new Error(`${LAB_URL} sent the browser to ${page.url()}`);
    }
    await page.locator('.jp-LauncherCard').first().waitFor();
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('apputils:change-theme', {
        theme: 'JupyterLab Light'
      })
    );
    await page.waitForFunction(
      () => document.body.getAttribute('data-jp-theme-light') === 'true'
    );
    await installRecorder(page);
    await page
      .getByRole('button', { name: 'Cluster Session', exact: true })
      .waitFor();
    await shot('launcher');
  });

  await step('kernelspec-tile', async () => {
    // The extension's own kernelspec (the launch form's defaults) from the
    // launcher's tile, as a person picks a kernel: its notebook runs in main1 of
    // a session it launched, which the toolbar names; "Shut Down Kernel" in the
    // Kernel menu ends that session. The notebook is closed after, unsaved.
    await page
      .locator('.jp-LauncherCard[data-category="Notebook"]', {
        // "… (launch form defaults)", "…: the shared service's defaults" (Hub)
        hasText: /^Cluster: /
      })
      .click();
    await notebookKernelIdle(page, 180000);
    const panelId = await page.evaluate(
      () => window.jupyterapp.shell.currentWidget.id
    );
    const notebook = `[id="${panelId}"]`;
    const indicator = page.locator(
      `${notebook} .jp-ClusterKernelIndicator[data-session-id]`
    );
    await indicator.waitFor({ timeout: TIMEOUT });
    const id = await indicator.getAttribute('data-session-id');
    await page.locator(`${notebook} .jp-Cell .cm-content`).first().click();
    await page.keyboard.type(
      "import socket; print('AT', socket.gethostname())"
    );
    await page.keyboard.press('Shift+Enter');
    const output = page.locator(`${notebook} .jp-OutputArea-output`, {
      hasText: /^AT /
    });
    await output.first().waitFor({ timeout: TIMEOUT });
    const tile = { sessionId: id };
    tile.where = (await output.first().innerText()).trim();
    tile.kernelId = await page.evaluate(
      () =>
        window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id
    );
    tile.running = await getJSON(api(`sessions/${id}`));
    await shot('kernelspec-tile');
    const ended = await shutDownKernelFromMenu(page, () =>
      getJSON(api(`sessions/${id}`))
    );
    tile.ended = ended.status;
    results.outputs.tile = tile;
    await page.evaluate(panelId => {
      const { shell, commands } = window.jupyterapp;
      for (const widget of shell.widgets('main')) {
        if (widget.id === panelId) {
          widget.dispose();
        }
      }
      if (!document.querySelector('.jp-LauncherCard')) {
        void commands.execute('launcher:create');
      }
    }, panelId);
    await page
      .getByRole('button', { name: 'Cluster Session', exact: true })
      .waitFor();
  });

  await step('launch-dialog', async () => {
    await page
      .getByRole('button', { name: 'Cluster Session', exact: true })
      .click();
    await page.locator('.jp-ClusterLaunchDialog').waitFor();
    await waitForText('.jp-ClusterLaunch-room', 'has room');
    const form = await textOf('.jp-ClusterLaunch');
    for (const label of [
      'Image',
      'Cluster mode',
      'Single-node',
      'Multi-node',
      'Cluster size',
      'CPU',
      'Memory',
      'Shared memory',
      'GPU',
      'Data folders',
      'Resource group',
      'Bootstrap command',
      'Total'
    ]) {
      if (!form.includes(label)) {
        throw new Error(`the launch dialog shows no ${label}`);
      }
    }
    await shot('launch-dialog');
    // A size above the limit is refused before anything is sent.
    await fillField('size', 99);
    await waitForText(
      '[data-field="size"] .jp-ClusterLaunch-error',
      'from 1 to'
    );
    const disabled = await page
      .locator('.jp-Dialog-button.jp-mod-accept')
      .isDisabled();
    if (!disabled) {
      throw new Error('Launch stays enabled with size 99');
    }
    await shot('launch-dialog-invalid');
    await fillField('size', 3);
    await fillField('cpu', 0.5);
    await fillField('mem', '512m');
    await waitForText(
      '.jp-ClusterLaunch-total',
      '3 × (0.5 CPU, 512m memory, 64m shm) = 1.5 CPU, 1.5g memory'
    );
    await waitForText(
      '.jp-ClusterLaunch-room',
      'room for all 3 containers now'
    );
    await shot('launch-dialog-size3');
  });

  await step('launch', async () => {
    const [response] = await Promise.all([
      page.waitForResponse(r => answers(r, 'POST', 'sessions')),
      page.locator('.jp-Dialog-button.jp-mod-accept').click()
    ]);
    if (response.status() !== 201) {
      throw new Error(`POST sessions answered ${response.status()}`);
    }
    const session = await response.json();
    sessionId = session.id;
    sessionName = session.name;
    results.sessionId = sessionId;
    await page
      .locator(`.jp-ClusterSession[data-session-id="${sessionId}"]`)
      .waitFor();
    await page
      .locator('.Toastify__toast', {
        hasText: `Cluster session ${sessionName}`
      })
      .first()
      .waitFor();
    await page.waitForTimeout(800); // the toast slides in
    await shot('launch-progress');
    // The notebook opens once the kernel runs in main1.
    await page.locator('.jp-NotebookPanel').waitFor({ timeout: 180000 });
    // As a person waits for the kernel indicator: connected and idle.
    await notebookKernelIdle(page, TIMEOUT);
    await page
      .locator(
        `.jp-ClusterSession[data-session-id="${sessionId}"][data-status="RUNNING"]`
      )
      .waitFor();
    await shot('notebook-opened');
  });

  await step('notebook', async () => {
    // One cell: the cluster's hosts from main1's environment, then SSH to sub2.
    const editor = page
      .locator('.jp-NotebookPanel .jp-Cell .cm-content')
      .first();
    await editor.click();
    await page.keyboard.type(
      "import os; print('HOSTS=' + os.environ['BACKENDAI_CLUSTER_HOSTS'])"
    );
    await page.keyboard.press('Enter');
    await page.keyboard.type('!ssh sub2 hostname');
    await page.keyboard.press('Shift+Enter');
    await page.waitForFunction(
      () => {
        const cell = document.querySelector('.jp-NotebookPanel .jp-Cell');
        const text = cell
          ? [...cell.querySelectorAll('.jp-OutputArea-output')]
              .map(out => out.textContent)
              .join('\n')
          : '';
        const lines = text.split('\n').map(line => line.trim());
        return (
          lines.includes('HOSTS=main1,sub1,sub2') && lines.includes('sub2')
        );
      },
      null,
      { timeout: 120000 }
    );
    results.outputs.notebook = await textOf(
      '.jp-NotebookPanel .jp-Cell:first-child .jp-OutputArea-output'
    );
    await shot('notebook-outputs');
  });

  await step('debugger', async () => {
    // JupyterLab offers its debugger for the cluster kernel (the kernelspec says it
    // supports it) and starts it in main1: the kernel's variables (the cell above
    // imported os) show in the debugger's sidebar. Switched off again after.
    const bug = '.jp-NotebookPanel-toolbar jp-button.jp-DebuggerBugButton';
    const enable = page.locator(`${bug}[title="Enable Debugger"]`).first();
    await enable.waitFor({ timeout: TIMEOUT });
    results.outputs.debuggerOffered =
      (await enable.getAttribute('aria-disabled')) === 'false';
    await enable.click();
    const disable = page.locator(`${bug}[title="Disable Debugger"]`).first();
    await disable.waitFor({ timeout: TIMEOUT });
    const variables = page.locator('.jp-DebuggerVariables');
    await variables
      .getByText('os', { exact: true })
      .first()
      .waitFor({ timeout: TIMEOUT });
    results.outputs.debuggerVariables = (await variables.innerText()).trim();
    await shot('debugger');
    await disable.click();
    await enable.waitFor({ timeout: TIMEOUT });
  });

  await step('usage-graphs', async () => {
    // The session is expanded and running: its containers' live graphs.
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    const item = `.jp-ClusterSession[data-session-id="${sessionId}"]`;
    await page.waitForFunction(
      item =>
        ['main1', 'sub1', 'sub2'].every(host => {
          const svg = document.querySelector(
            `${item} .jp-ClusterContainer[data-host="${host}"] svg.jp-ClusterStats-cpu`
          );
          return svg && Number(svg.getAttribute('data-points')) >= 2;
        }),
      item,
      { timeout: 60000 }
    );
    results.outputs.usage = await textOf(`${item} .jp-ClusterStats`);
    results.outputs.usageLabels = await page.evaluate(
      item =>
        [
          ...document.querySelectorAll(
            `${item} .jp-ClusterStats svg[role="img"]`
          )
        ].map(svg => svg.getAttribute('aria-label')),
      item
    );
    await shot('usage-graphs');
  });

  await step('sidebar', async () => {
    await page.evaluate(id => {
      const app = window.jupyterapp;
      app.shell.activateById('jp-cluster-sessions');
      return id;
    }, sessionId);
    const item = page.locator(
      `.jp-ClusterSession[data-session-id="${sessionId}"]`
    );
    await item.waitFor();
    const hosts = await item
      .locator('.jp-ClusterContainer-host')
      .allTextContents();
    if (hosts.join(',') !== 'main1,sub1,sub2') {
      throw new Error(`the sidebar lists ${hosts.join(',')}`);
    }
    await page.waitForFunction(
      id =>
        [
          ...document.querySelectorAll(
            `.jp-ClusterSession[data-session-id="${id}"] .jp-ClusterContainer`
          )
        ].every(c => c.getAttribute('data-status') === 'RUNNING'),
      sessionId
    );
    results.outputs.sidebar = await item.textContent();
    await shot('sidebar');
  });

  await step('logs', async () => {
    await page
      .locator(
        `.jp-ClusterSession[data-session-id="${sessionId}"] [data-host="sub1"] .jp-ClusterContainer-logs`
      )
      .click();
    const view = page.locator('.jp-ClusterLogs-view[data-host="sub1"]');
    await view.waitFor();
    const tabs = await page
      .locator('.jp-ClusterLogs .lm-TabBar-tab')
      .allTextContents();
    if (tabs.join(',') !== 'main1,sub1,sub2') {
      throw new Error(`the log panel has tabs ${tabs.join(',')}`);
    }
    await waitForText(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-line',
      'ready'
    );
    await view.locator('.jp-ClusterLogs-search').fill('listening');
    await waitForText(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-count',
      'of'
    );
    results.outputs.logs = await textOf(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-text'
    );
    results.outputs.logSearch = await textOf(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-count'
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      view.locator('.jp-ClusterLogs-download').click()
    ]);
    results.outputs.logDownload = download.suggestedFilename();
    await download.saveAs(path.join(ARTIFACTS, download.suggestedFilename()));
    await shot('logs-sub1');
  });

  await step('terminal', async () => {
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    await page
      .locator(
        `.jp-ClusterSession[data-session-id="${sessionId}"] [data-host="sub1"] .jp-ClusterContainer-terminal`
      )
      .click();
    // Named "sub1 · <session>", then by the shell's title ("work@sub1: ~").
    await page
      .locator('#jp-main-dock-panel .lm-TabBar-tab', { hasText: 'sub1' })
      .filter({ hasNotText: 'Logs' })
      .first()
      .waitFor();
    const terminal = page.locator('.jp-Terminal:visible').last();
    await terminal.waitFor();
    await page.waitForTimeout(1000);
    await terminal.click();
    await page.keyboard.type('echo "HOST=$(hostname) USER=$(whoami)"');
    await page.keyboard.press('Enter');
    await waitForText(
      '.jp-Terminal .xterm-accessibility-tree',
      'HOST=sub1 USER=work',
      60000
    );
    results.outputs.terminal = await textOf(
      '.jp-Terminal .xterm-accessibility-tree'
    );
    await shot('terminal-sub1');
  });

  await step('pending', async () => {
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    // Two containers that the agent could hold, but not while the first session
    // runs: the launch must wait (PENDING).
    const agents = await getJSON(api('agents'));
    const agent = agents.find(a => a.resource_group === 'default') || agents[0];
    const cpu = Math.min(agent.capacity.cpu / 2, agent.free.cpu / 2 + 0.25);
    await page.locator('.jp-ClusterSidebar-launch').click();
    await page.locator('.jp-ClusterLaunchDialog').waitFor();
    await fillField('size', 2);
    await fillField('cpu', cpu.toFixed(3));
    await fillField('mem', '512m');
    // The server's dry run, not the dialog's own estimate: it names the queue.
    await waitForText(
      '.jp-ClusterLaunch-room',
      'The session would wait (PENDING): 1st in the queue of resource group default'
    );
    await page.locator('.jp-ClusterLaunch [name="start_kernel"]').uncheck();
    // Whether a kernel starts changes nothing of where it goes: the answer stays.
    const kept = await textOf('.jp-ClusterLaunch-room');
    if (!kept.includes('in the queue')) {
      throw new Error(
        `unchecking the kernel dropped the server's answer: ${kept}`
      );
    }
    await shot('launch-dialog-no-room');
    const [response] = await Promise.all([
      page.waitForResponse(r => answers(r, 'POST', 'sessions')),
      page.locator('.jp-Dialog-button.jp-mod-accept').click()
    ]);
    pendingId = (await response.json()).id;
    results.pendingId = pendingId;
    const item = page.locator(
      `.jp-ClusterSession[data-session-id="${pendingId}"][data-status="PENDING"]`
    );
    await item.waitFor();
    await item.locator('.jp-ClusterSession-reason').waitFor();
    results.outputs.pendingReason = await item
      .locator('.jp-ClusterSession-reason')
      .textContent();
    await shot('sidebar-pending');
    await item.locator('.jp-ClusterSession-terminate').click();
    await confirmDialog();
    await page.waitForFunction(id => {
      const node = document.querySelector(
        `.jp-ClusterSession[data-session-id="${id}"]`
      );
      return !node || node.getAttribute('data-status') === 'CANCELLED';
    }, pendingId);
  });

  await step('palette', async () => {
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('apputils:activate-command-palette')
    );
    const input = page
      .locator('.jp-ModalCommandPalette input, #modal-command-palette input')
      .first();
    await input.waitFor();
    await input.fill('cluster');
    await page.waitForTimeout(300);
    const items = await textOf(
      '.lm-CommandPalette-item:not(.lm-mod-hidden) .lm-CommandPalette-itemLabel'
    );
    results.outputs.palette = items;
    for (const label of [
      'Launch Cluster Session…',
      'Show Cluster Sessions',
      'Show Cluster Container Logs…',
      'Open Terminal in Cluster Container…',
      'Open terminals in every container',
      'Terminate Cluster Session…'
    ]) {
      if (!items.includes(label)) {
        throw new Error(`the palette has no "${label}"`);
      }
    }
    await shot('palette');
    await page.keyboard.press('Escape');
  });

  await step('dark-theme', async () => {
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('apputils:change-theme', {
        theme: 'JupyterLab Dark'
      })
    );
    await page.waitForFunction(
      () => document.body.getAttribute('data-jp-theme-light') === 'false'
    );
    await page.waitForTimeout(1000);
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    await shot('dark-sidebar-terminal');
    const logs = page.locator('.jp-ClusterLogs').first();
    await page.evaluate(() => {
      const panel = document.querySelector('.jp-ClusterLogs');
      window.jupyterapp.shell.activateById(panel.id);
    });
    await logs.waitFor();
    await shot('dark-logs');
    await page.locator('.jp-ClusterSidebar-launch').click();
    await page.locator('.jp-ClusterLaunchDialog').waitFor();
    await fillField('size', 3);
    await fillField('mem', 'lots');
    await page.waitForTimeout(300);
    await shot('dark-launch-dialog');
    await page.locator('.jp-Dialog-button.jp-mod-reject').click();
    await page.locator('.jp-Dialog').waitFor({ state: 'detached' });
  });

  await step('terminate', async () => {
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    const item = page.locator(
      `.jp-ClusterSession[data-session-id="${sessionId}"]`
    );
    await item.locator('.jp-ClusterSession-terminate').click();
    await confirmDialog();
    await page
      .locator(
        `.jp-ClusterSession[data-session-id="${sessionId}"][data-status="TERMINATED"]`
      )
      .waitFor({ timeout: 120000 });
    await shot('terminated');
    const remaining = await getJSON(api('sessions'));
    results.remainingSessions = remaining.map(s => `${s.id} ${s.status}`);
  });

  await step('logs-after-termination', async () => {
    // The log the server kept of sub1, from the "Recent sessions" section.
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    const toggle = page.locator('.jp-ClusterRecent-toggle');
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') {
      await toggle.click();
    }
    const recent = page.locator(
      `.jp-ClusterRecent-session[data-session-id="${sessionId}"]`
    );
    await recent.waitFor();
    const button = recent.locator('.jp-ClusterRecent-log', { hasText: 'sub1' });
    await Promise.all([
      page.waitForResponse(
        r =>
          r.request().method() === 'GET' &&
          new URL(r.url()).pathname ===
            new URL(api(`sessions/${sessionId}/containers/sub1/logs`))
              .pathname &&
          r.status() === 200
      ),
      button.click()
    ]);
    const view = page.locator('.jp-ClusterLogs-view[data-host="sub1"]');
    await view.locator('.jp-ClusterLogs-kept').waitFor();
    await waitForText(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-line',
      'jupyter-cluster: ready'
    );
    results.outputs.keptNote = await textOf(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-kept'
    );
    results.outputs.keptLog = await textOf(
      '.jp-ClusterLogs-view[data-host="sub1"] .jp-ClusterLogs-text'
    );
    await shot('logs-after-termination');
  });

  await step('terminals-every-container', async () => {
    // A size-2 session (no kernel), then its "Terminals" button in the sidebar:
    // one terminal tab per container, main1 then sub1, each shell in its own.
    const launched = await sendJSON('POST', api('sessions'), {
      size: 2,
      cpu: 0.5,
      mem: '256m',
      start_kernel: false
    });
    results.tabsSessionId = launched.id;
    results.outputs.tabsSession = launched.name;
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-sessions')
    );
    const item = `.jp-ClusterSession[data-session-id="${launched.id}"]`;
    await page.waitForFunction(
      item => {
        const node = document.querySelector(item);
        const containers = node
          ? [...node.querySelectorAll('.jp-ClusterContainer')]
          : [];
        return (
          node?.getAttribute('data-status') === 'RUNNING' &&
          containers.length === 2 &&
          containers.every(c => c.getAttribute('data-status') === 'RUNNING')
        );
      },
      item,
      { timeout: 120000 }
    );
    await page.locator(`${item} .jp-ClusterSession-terminals`).click();
    const labels = ['main1', 'sub1'].map(h => `${h} · ${launched.name}`);
    // The tabs of the main area, in order, with the widget each shows.
    const tabsOf = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar')].map(
          bar =>
            [...bar.querySelectorAll('.lm-TabBar-tab')].map(tab => ({
              label: tab.querySelector('.lm-TabBar-tabLabel')?.textContent,
              id: tab.getAttribute('data-id')
            }))
        )
      );
    await page.waitForFunction(
      labels =>
        labels.every(label =>
          [
            ...document.querySelectorAll(
              '#jp-main-dock-panel .lm-TabBar-tabLabel'
            )
          ].some(n => n.textContent === label)
        ),
      labels,
      { timeout: 60000 }
    );
    const bars = await tabsOf();
    results.outputs.terminalTabs = bars.map(bar => bar.map(t => t.label));
    const bar = bars.find(b => b.some(t => t.label === labels[0])) || [];
    const at = bar.findIndex(t => t.label === labels[0]);
    if (bar[at + 1]?.label !== labels[1]) {
      throw new Error(
        `the terminal tabs are not main1 then sub1, side by side: ${JSON.stringify(results.outputs.terminalTabs)}`
      );
    }
    results.outputs.everyTerminal = {};
    for (const [i, host] of ['main1', 'sub1'].entries()) {
      const id = bar[at + i].id;
      await page
        .locator(`#jp-main-dock-panel .lm-TabBar-tab[data-id="${id}"]`)
        .click();
      const terminal = page.locator(`[id="${id}"] .jp-Terminal`);
      await terminal.waitFor();
      await page.waitForTimeout(1000);
      await terminal.click();
      await page.keyboard.type('echo "I AM $(hostname)"');
      await page.keyboard.press('Enter');
      await waitForText(
        `[id="${id}"] .xterm-accessibility-tree`,
        `I AM ${host}`,
        60000
      );
      results.outputs.everyTerminal[host] = await textOf(
        `[id="${id}"] .xterm-accessibility-tree`
      );
    }
    await shot('terminals-every-container');

    // The shell in sub1 ends. JupyterLab reopens a terminal tab by name (after
    // a reload, or a server restart); under a name it does not find running it
    // asks for a new terminal, which must not be a shell on the server's host.
    const terminalsUrl = new URL('api/terminals', LAB_URL).toString();
    const terminalNames = async () =>
      (await sendJSON('GET', terminalsUrl)).map(t => t.name);
    const short = launched.id.replace(/-/g, '').slice(0, 12);
    const prefix = `cluster_sub1_${short}_`;
    const subName = (await terminalNames()).find(n => n.startsWith(prefix));
    if (!subName) {
      throw new Error(`no terminal named ${prefix}N: ${await terminalNames()}`);
    }
    const subId = bar[at + 1].id;
    await page
      .locator(`#jp-main-dock-panel .lm-TabBar-tab[data-id="${subId}"]`)
      .click();
    await page.locator(`[id="${subId}"] .jp-Terminal`).click();
    await page.keyboard.type('exit');
    await page.keyboard.press('Enter');
    for (let i = 0; (await terminalNames()).includes(subName); i++) {
      if (i > 60) {
        throw new Error(`${subName} still runs after exit`);
      }
      await page.waitForTimeout(500);
    }
    results.outputs.reopenEnded = await page.evaluate(async name => {
      try {
        await window.jupyterapp.commands.execute('terminal:open', { name });
        return 'opened';
      } catch (error) {
        return `refused ${error?.response?.status}: ${error?.message}`;
      }
    }, subName);
    if (!results.outputs.reopenEnded.startsWith('refused 409')) {
      throw new Error(`reopening ${subName}: ${results.outputs.reopenEnded}`);
    }
    if ((await terminalNames()).includes(subName)) {
      throw new Error(`a terminal runs under the ended ${subName}`);
    }
    await sendJSON('DELETE', api(`sessions/${launched.id}`));
    await page
      .locator(`${item}[data-status="TERMINATED"]`)
      .waitFor({ timeout: 120000 });
  });

  results.ok = true;
}

/** What the page recorded (statuses, notifications), also after a failure. */
async function record(context) {
  const page = context.pages()[0];
  const recorded = page
    ? await page.evaluate(() => window.__cluster).catch(() => null)
    : null;
  if (recorded) {
    results.statuses = recorded.seen;
    results.notifications = recorded.notes;
  }
}

let browserContext = null;
let userDataDir = null;

main()
  .catch(async error => {
    results.error = String(error.stack || error);
  })
  .then(async () => {
    if (browserContext) {
      await record(browserContext);
      await browserContext.close().catch(() => undefined);
      fs.rmSync(userDataDir, { recursive: true, force: true });
    }
  })
  .finally(() => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(
      path.join(ARTIFACTS, 'results.json'),
      JSON.stringify(results, null, 2)
    );
    process.exit(results.ok ? 0 : 1);
  });
