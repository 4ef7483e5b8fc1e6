/*
 * Data folders in JupyterLab's "Data folders" panel, in headless Chromium against
 * a real `jupyter lab`. Started by tests/browser/test_lab_folders.py, which makes
 * the shared folder SHARED (with a file) and the file to upload (UPLOAD_FILE,
 * its sha256 UPLOAD_SHA), reads results.json and checks what it says. Through the
 * panel's toolbar it makes data folder FOLDER, uploads the file (with the upload
 * throttled so its progress shows), downloads it, renames it (also from Lab's
 * context menu, which acts on the panel once it has the focus), deletes it, opens a
 * notebook stored in the folder, edits and saves it, and removes the folder;
 * after each step it reads the server's answer through REST (the file's bytes, the
 * folder's listing, the saved notebook). Screenshots go to $ARTIFACTS.
 */

'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { runInLab } = require('./lab_runner');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const FOLDER = process.env.FOLDER;
const SHARED = process.env.SHARED;
const UPLOAD_FILE = process.env.UPLOAD_FILE;
const ARTIFACTS = process.env.ARTIFACTS;

const NOTEBOOK = {
  cells: [
    {
      cell_type: 'markdown',
      id: 'a1',
      metadata: {},
      source: ['# hello from a data folder']
    }
  ],
  metadata: {
    kernelspec: {
      name: 'python3',
      display_name: 'Python 3',
      language: 'python'
    }
  },
  nbformat: 4,
  nbformat_minor: 5
};

/* A REST call of the extension's API with the token: [status, body as Buffer]. */
async function rest(method, route, body) {
  const response = await fetch(new URL(`cluster/api/${route}`, LAB_URL), {
    method,
    body,
    headers: { Authorization: `token ${TOKEN}` }
  });
  return [response.status, Buffer.from(await response.arrayBuffer())];
}

async function listing(dir) {
  const [status, body] = await rest('GET', `folders/${dir}`);
  return status === 200 ? JSON.parse(body).entries.map(e => e.name) : status;
}

const sha256 = buffer =>
  crypto.createHash('sha256').update(buffer).digest('hex');

runInLab(async ({ page, step, shot, results }) => {
  const out = results.outputs;
  const panel = page.locator('#jp-cluster-folders');
  const item = name =>
    panel.locator('.jp-DirListing-item', {
      has: page.locator('.jp-DirListing-itemText', { hasText: name })
    });
  const tool = name => panel.locator(`.jp-ClusterFolders-${name} button`);
  const select = async name => {
    await item(name).first().click();
  };

  await step('open-panel', async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page.locator('.jp-LauncherCard').first().waitFor();
    await page.evaluate(() =>
      window.jupyterapp.shell.activateById('jp-cluster-folders')
    );
    await item(SHARED).waitFor();
    out.sharedReadonly = await item(SHARED).getAttribute('data-readonly');
  });

  await step('create-folder', async () => {
    await tool('new-folder').click();
    await page.locator('.jp-Dialog input').fill(FOLDER);
    await page.locator('.jp-Dialog .jp-mod-accept').click();
    await item(FOLDER).waitFor();
    out.folderReadonly = await item(FOLDER).getAttribute('data-readonly');
    await shot('folders-top');
    const [status, body] = await rest('GET', 'folders');
    out.foldersAfterCreate = status === 200 ? JSON.parse(body) : status;
    await item(FOLDER).dblclick();
    await panel.locator('.jp-BreadCrumbs', { hasText: FOLDER }).waitFor();
  });

  await step('upload', async () => {
    // Record every progress value the panel shows while the file goes up slowly.
    await page.evaluate(() => {
      window.__progress = [];
      new MutationObserver(() => {
        for (const row of document.querySelectorAll(
          '.jp-ClusterFolders-uploadRow'
        )) {
          window.__progress.push(Number(row.dataset.progress));
        }
      }).observe(document.getElementById('jp-cluster-folders'), {
        subtree: true,
        attributes: true,
        attributeFilter: ['data-progress', 'data-state'],
        childList: true
      });
    });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 2 * 1024 * 1024
    });
    const [chooser] = await Promise.all([
      page.waitForEvent('filechooser'),
      tool('upload').click()
    ]);
    await chooser.setFiles(UPLOAD_FILE);
    await page.waitForFunction(() => {
      const row = document.querySelector('.jp-ClusterFolders-uploadRow');
      return row && Number(row.dataset.progress) >= 30;
    });
    await shot('folders-uploading');
    await panel
      .locator('.jp-ClusterFolders-uploadRow[data-state="done"]')
      .waitFor({ timeout: 120000 });
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1
    });
    out.progress = await page.evaluate(() => window.__progress);
    await item(path.basename(UPLOAD_FILE)).waitFor();
    const name = path.basename(UPLOAD_FILE);
    const [status, body] = await rest('GET', `folders/${FOLDER}/files/${name}`);
    out.restStatus = status;
    out.restSha = sha256(body);
    out.restSize = body.length;
  });

  await step('download', async () => {
    const name = path.basename(UPLOAD_FILE);
    await select(name);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      tool('download').click()
    ]);
    const saved = path.join(ARTIFACTS, 'downloaded.bin');
    await download.saveAs(saved);
    out.downloadName = download.suggestedFilename();
    out.downloadSha = sha256(fs.readFileSync(saved));
    fs.rmSync(saved);
  });

  await step('rename', async () => {
    await select(path.basename(UPLOAD_FILE));
    await tool('rename').click();
    const editor = panel.locator('.jp-DirListing-editor');
    await editor.fill('renamed.bin');
    await editor.press('Enter');
    await item('renamed.bin').waitFor();
    out.afterRename = await listing(`${FOLDER}/files`);
  });

  await step('context-menu', async () => {
    // Lab's own file-browser context menu acts on this panel once it has the
    // focus (it joins Lab's file-browser tracker then): Rename edits the name
    // here, in place. Escape leaves the name as it was.
    await item('renamed.bin').click({ button: 'right' });
    await page.locator('.lm-Menu-itemLabel', { hasText: /^Rename$/ }).click();
    const editor = panel.locator('.jp-DirListing-editor');
    await editor.waitFor();
    out.contextRenameValue = await editor.inputValue();
    await editor.press('Escape');
    await editor.waitFor({ state: 'detached' });
  });

  await step('delete', async () => {
    await select('renamed.bin');
    await tool('delete').click();
    await page.locator('.jp-Dialog .jp-mod-accept').click();
    await item('renamed.bin').waitFor({ state: 'detached' });
    out.afterDelete = await listing(`${FOLDER}/files`);
  });

  await step('open-notebook', async () => {
    const body = JSON.stringify(NOTEBOOK);
    const [status] = await rest(
      'PUT',
      `folders/${FOLDER}/files/nb.ipynb`,
      body
    );
    out.notebookPut = status;
    await tool('refresh').click();
    await item('nb.ipynb').dblclick();
    const cell = page.locator('.jp-NotebookPanel .jp-MarkdownOutput h1');
    await cell.waitFor();
    out.notebookHeading = (await cell.textContent()).replace('¶', '').trim();
    out.notebookTab = await page
      .locator('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current')
      .getAttribute('title');
    await shot('folders-view');
  });

  await step('save-notebook', async () => {
    out.saveEnabled = await page.evaluate(async () => {
      const { commands, shell } = window.jupyterapp;
      const panel = shell.currentWidget;
      // A loaded machine can show the cells before the document's context is ready,
      // and docmanager:save does nothing (silently) until it is.
      await panel.context.ready;
      await panel.revealed;
      // The notebook's local kernel writes its language_info into the metadata when
      // it connects, which marks the model dirty again; on a loaded machine that can
      // land after the save, so let the kernel settle first and save until clean.
      await panel.sessionContext.ready;
      const kernel = panel.sessionContext.session?.kernel;
      if (kernel) {
        await kernel.info;
      }
      const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
      const notebook = panel.content;
      notebook.activeCellIndex = 0;
      await commands.execute('notebook:insert-cell-below');
      notebook.activeCell.model.sharedModel.setSource('print("saved back")');
      for (let i = 0; i < 100 && !commands.isEnabled('docmanager:save'); i++) {
        await sleep(100);
      }
      const enabled = commands.isEnabled('docmanager:save');
      await commands.execute('docmanager:save');
      for (let i = 0; i < 10 && panel.context.model.dirty; i++) {
        await sleep(1000);
        if (panel.context.model.dirty) {
          await commands.execute('docmanager:save');
        }
      }
      return enabled;
    });
    await page
      .locator(
        '#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current:not(.jp-mod-dirty)'
      )
      .waitFor();
    const [status, body] = await rest(
      'GET',
      `folders/${FOLDER}/files/nb.ipynb`
    );
    out.savedStatus = status;
    out.savedSources =
      status === 200
        ? JSON.parse(body).cells.map(c => [].concat(c.source).join(''))
        : [];
  });

  await step('remove-folder', async () => {
    // The notebook's local kernel may have had the server show a dialog (e.g. a
    // lost kernel connection): note it and close it, it is not the panel's.
    out.otherDialogs = [];
    for (let i = 0; i < 5 && (await page.locator('.jp-Dialog').count()); i++) {
      out.otherDialogs.push(
        await page.locator('.jp-Dialog .jp-Dialog-header').first().textContent()
      );
      await page.keyboard.press('Escape');
      await page.waitForTimeout(300);
    }
    await panel.locator('.jp-BreadCrumbs-home').click();
    await item(FOLDER).waitFor();
    await select(FOLDER);
    await tool('delete').click();
    await page.locator('.jp-Dialog .jp-mod-accept').click();
    await item(FOLDER).waitFor({ state: 'detached' });
    const [status, body] = await rest('GET', 'folders');
    out.foldersAfterRemove =
      status === 200 ? JSON.parse(body).map(f => f.name) : status;
  });
});
