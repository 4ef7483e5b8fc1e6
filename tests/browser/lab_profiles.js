/*
 * The launch dialog offers launch profiles first, in headless Chromium against a
 * real `jupyter lab`. Started by tests/browser/test_lab_profiles.py, which saves
 * the user's profiles through REST, reads results.json and cleans up. Opens the
 * dialog from the launcher, reads the Profile select (its entries, which are
 * disabled and why), chooses PROFILE and reads the fields it filled, then
 * cancels: nothing is launched.
 */

"use strict";

const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const REPO = path.resolve(__dirname, "..", "..");
const { chromium } = createRequire(
  path.join(REPO, "labextension", "package.json"),
)("playwright-core");

const LAB_URL = process.env.LAB_URL;
const TOKEN = process.env.LAB_TOKEN;
const PROFILE = process.env.PROFILE;
const ARTIFACTS = process.env.ARTIFACTS;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

const results = { ok: false, steps: [], outputs: {}, consoleErrors: [] };

async function main(context) {
  const page = context.pages()[0] || (await context.newPage());
  page.on("pageerror", (error) => results.consoleErrors.push(String(error)));
  const step = async (name, body) => {
    const entry = { name, ok: false };
    results.steps.push(entry);
    await body();
    entry.ok = true;
  };
  const shot = (name) =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  const value = (name) =>
    page.locator(`.jp-ClusterLaunch [name="${name}"]`).first().inputValue();

  await step("open-dialog", async () => {
    await page.goto(new URL(`lab?reset&token=${TOKEN}`, LAB_URL).toString());
    await page
      .getByRole("button", { name: "Cluster Session", exact: true })
      .click();
    await page.locator(".jp-ClusterLaunchDialog").waitFor();
    await page.locator('.jp-ClusterLaunch select[name="profile"]').waitFor();
  });

  await step("profile-entries", async () => {
    results.outputs.firstSelect = await page
      .locator(".jp-ClusterLaunch select")
      .first()
      .getAttribute("name");
    results.outputs.entries = await page.evaluate(() =>
      [
        ...document.querySelectorAll(
          '.jp-ClusterLaunch select[name="profile"] option',
        ),
      ].map((o) => ({
        value: o.value,
        disabled: o.disabled,
        title: o.title,
        text: o.textContent,
      })),
    );
    await shot("profiles-listed");
  });

  await step("choose-profile", async () => {
    results.outputs.sizeBefore = await value("size");
    await page
      .locator('.jp-ClusterLaunch select[name="profile"]')
      .selectOption(PROFILE);
    await page.waitForFunction(
      (before) =>
        document.querySelector('.jp-ClusterLaunch input[name="size"]')
          ?.value !== before,
      results.outputs.sizeBefore,
      { timeout: 10000 },
    );
    results.outputs.filled = {
      size: await value("size"),
      cpu: await value("cpu"),
      mem: await value("mem"),
      env: await value("env"),
    };
    results.outputs.launchEnabled = await page
      .locator(".jp-ClusterLaunchDialog .jp-Dialog-button.jp-mod-accept")
      .isEnabled();
    await shot("profile-chosen");
    await page
      .locator(".jp-ClusterLaunchDialog .jp-Dialog-button.jp-mod-reject")
      .click();
    await page
      .locator(".jp-ClusterLaunchDialog")
      .waitFor({ state: "detached" });
  });
  results.ok = true;
}

(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const userDataDir = fs.mkdtempSync(path.join(ARTIFACTS, ".chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
    viewport: { width: 1280, height: 900 },
  });
  context.setDefaultTimeout(60000);
  try {
    await main(context);
  } catch (error) {
    results.error = String(error.stack || error);
    const page = context.pages()[0];
    if (page) {
      await page
        .screenshot({ path: path.join(ARTIFACTS, "failed.png") })
        .catch(() => undefined);
    }
  } finally {
    await context.close().catch(() => undefined);
    fs.rmSync(userDataDir, { recursive: true, force: true });
    fs.writeFileSync(
      path.join(ARTIFACTS, "results.json"),
      JSON.stringify(results, null, 2),
    );
    process.exit(results.ok ? 0 : 1);
  }
})();
