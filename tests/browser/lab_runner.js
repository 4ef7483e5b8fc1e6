/*
 * The frame every small Lab browser script shares (lab_apps.js, lab_indicator.js,
 * lab_profiles.js): headless Chromium in a throwaway profile, a page whose
 * errors are collected, named steps and screenshots in $ARTIFACTS, a screenshot
 * on failure, and results.json written for the Python test that started it. The
 * script's own steps go in the function given to runInLab. Also what several
 * scripts do: notebookKernelIdle, shutDownKernelFromMenu.
 */

'use strict';

const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');
const { watchNetwork } = require('./network_watch');

const REPO = path.resolve(__dirname, '..', '..');
const { chromium } = createRequire(
  path.join(REPO, 'labextension', 'package.json')
)('playwright-core');

/*
 * Run steps(lab) in Chromium and exit 0 when they all pass. `lab` holds the page,
 * step(name, body) (recorded in results.steps), shot(name) (a screenshot) and the
 * results object, whose `outputs` the steps fill.
 */
function runInLab(steps) {
  const artifacts = process.env.ARTIFACTS;
  const results = { ok: false, steps: [], outputs: {}, consoleErrors: [] };
  (async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    const userDataDir = fs.mkdtempSync(path.join(artifacts, '.chromium-'));
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
      viewport: { width: 1280, height: 900 }
    });
    context.setDefaultTimeout(60000);
    try {
      const page = context.pages()[0] || (await context.newPage());
      page.on('pageerror', error => results.consoleErrors.push(String(error)));
      await watchNetwork(page, results);
      const step = async (name, body) => {
        const entry = { name, ok: false };
        results.steps.push(entry);
        await body();
        entry.ok = true;
      };
      const shot = name =>
        page.screenshot({ path: path.join(artifacts, `${name}.png`) });
      await steps({ page, step, shot, results });
      results.ok = true;
    } catch (error) {
      results.error = String(error.stack || error);
      const page = context.pages()[0];
      if (page) {
        await page
          .screenshot({ path: path.join(artifacts, 'failed.png') })
          .catch(() => undefined);
      }
    } finally {
      await context.close().catch(() => undefined);
      fs.rmSync(userDataDir, { recursive: true, force: true });
      fs.writeFileSync(
        path.join(artifacts, 'results.json'),
        JSON.stringify(results, null, 2)
      );
      process.exit(results.ok ? 0 : 1);
    }
  })();
}

/** Wait until the current notebook's kernel is connected and idle. */
async function notebookKernelIdle(page, timeout) {
  await page.waitForFunction(
    () => {
      const widget = window.jupyterapp.shell.currentWidget;
      const context = widget && widget.sessionContext;
      const kernel = context && context.session && context.session.kernel;
      return Boolean(
        context && context.isReady && kernel && kernel.status === 'idle'
      );
    },
    null,
    { timeout }
  );
}

/**
 * Shut the current notebook's kernel down as a person does (the Kernel menu's
 * "Shut Down Kernel"), then call read() (a session's REST model) every 0.5 s
 * until the session is TERMINATED, two minutes at most; the last model read.
 */
async function shutDownKernelFromMenu(page, read) {
  await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Kernel$/ }).click();
  await page
    .locator('.lm-Menu-itemLabel', { hasText: /^Shut Down Kernel$/ })
    .click();
  const deadline = Date.now() + 120000;
  let session = await read();
  while (session.status !== 'TERMINATED' && Date.now() < deadline) {
    await page.waitForTimeout(500);
    session = await read();
  }
  return session;
}

module.exports = { runInLab, notebookKernelIdle, shutDownKernelFromMenu };
