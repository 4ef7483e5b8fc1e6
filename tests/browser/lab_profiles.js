/*
 * The launch dialog offers launch profiles first, in headless Chromium against a
 * real `jupyter lab`. Started by tests/browser/test_lab_profiles.py, which saves
 * the user's profiles through REST, reads results.json and cleans up. Opens the
 * dialog from the launcher, reads the Profile select (its entries, which are
 * disabled and why), chooses PROFILE and reads the fields it filled, chooses
 * JOB_PROFILE and reads the body of the dry run the dialog then asks for (its
 * retries, which no field shows), chooses PROFILE again, types a wrong then a
 * right line into the Apps field and reads what the dialog says, then cancels:
 * nothing is launched.
 */

'use strict';

const { runInLab } = require('./lab_runner');

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const PROFILE = process.env.PROFILE;
const JOB_PROFILE = process.env.JOB_PROFILE;

runInLab(async ({ page, step, shot, results }) => {
  const value = name =>
    page.locator(`.jp-ClusterLaunch [name="${name}"]`).first().inputValue();

  await step('open-dialog', async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page
      .getByRole('button', { name: 'Cluster Session', exact: true })
      .click();
    await page.locator('.jp-ClusterLaunchDialog').waitFor();
    await page.locator('.jp-ClusterLaunch select[name="profile"]').waitFor();
  });

  await step('profile-entries', async () => {
    results.outputs.firstSelect = await page
      .locator('.jp-ClusterLaunch select')
      .first()
      .getAttribute('name');
    results.outputs.entries = await page.evaluate(() =>
      [
        ...document.querySelectorAll(
          '.jp-ClusterLaunch select[name="profile"] option'
        )
      ].map(o => ({
        value: o.value,
        disabled: o.disabled,
        title: o.title,
        text: o.textContent
      }))
    );
    await shot('profiles-listed');
  });

  await step('choose-profile', async () => {
    results.outputs.sizeBefore = await value('size');
    await page
      .locator('.jp-ClusterLaunch select[name="profile"]')
      .selectOption(PROFILE);
    await page.waitForFunction(
      before =>
        document.querySelector('.jp-ClusterLaunch input[name="size"]')
          ?.value !== before,
      results.outputs.sizeBefore,
      { timeout: 10000 }
    );
    results.outputs.filled = {
      size: await value('size'),
      cpu: await value('cpu'),
      mem: await value('mem'),
      env: await value('env'),
      apps: await value('apps')
    };
    results.outputs.launchEnabled = await page
      .locator('.jp-ClusterLaunchDialog .jp-Dialog-button.jp-mod-accept')
      .isEnabled();
    await shot('profile-chosen');
  });

  await step('job-profile-dry-run', async () => {
    const asked = page.waitForRequest(
      r =>
        r.url().includes('dry_run=1') &&
        (r.postData() || '').includes('retries'),
      { timeout: 15000 }
    );
    await page
      .locator('.jp-ClusterLaunch select[name="profile"]')
      .selectOption(JOB_PROFILE);
    const body = JSON.parse((await asked).postData());
    results.outputs.jobDryRun = {
      command: body.command,
      retries: body.retries
    };
    await page
      .locator('.jp-ClusterLaunch select[name="profile"]')
      .selectOption(PROFILE);
  });

  await step('type-apps', async () => {
    const apps = page.locator('.jp-ClusterLaunch textarea[name="apps"]');
    const launch = page.locator(
      '.jp-ClusterLaunchDialog .jp-Dialog-button.jp-mod-accept'
    );
    const error = page.locator(
      '.jp-ClusterLaunch [data-field="apps"] .jp-ClusterLaunch-error'
    );
    await apps.fill('tb=6006\nweb=70000');
    await error.waitFor({ timeout: 10000 });
    results.outputs.appsError = await error.textContent();
    results.outputs.launchEnabledWithBadApps = await launch.isEnabled();
    await shot('apps-wrong');
    await apps.fill('tb=6006\nweb = 8080');
    await error.waitFor({ state: 'detached', timeout: 10000 });
    results.outputs.appsTyped = await value('apps');
    results.outputs.launchEnabledWithApps = await launch.isEnabled();
    await page
      .locator('.jp-ClusterLaunchDialog .jp-Dialog-button.jp-mod-reject')
      .click();
    await page
      .locator('.jp-ClusterLaunchDialog')
      .waitFor({ state: 'detached' });
  });
});
