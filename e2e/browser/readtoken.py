"""readtoken.py: tidemark serve --read-token and its Host check in a real chromium.

Run by e2e/browser_test.go (TestBrowserReadTokenAndRebinding) with the test
venv's python:

    python readtoken.py INPUT.json

INPUT holds the server's url, the token, the job to find and the artifacts
folder. The script opens the dashboard, which says the token is needed; types
the token, after which the jobs page shows the job; then opens the server
under a DNS name that chromium resolves to 127.0.0.1 (a rebinding page, as
--host-resolver-rules maps it) and checks that neither the page nor its
same-origin fetch of the API gets anything but 403. It prints one JSON object
{"checked": [...]} and exits non-zero on the first mismatch or uncaught
exception.
"""

import json
import os
import sys
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright

TIMEOUT_MS = 15000


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def main():
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    done = []

    def check(what, ok, detail=""):
        if not ok:
            raise AssertionError(f"{what}: {detail}")
        done.append(what)

    port = urlparse(inp["url"]).port
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ["TIDEMARK_TEST_CHROMIUM"], headless=True,
                                    args=["--host-resolver-rules=MAP rebind.test 127.0.0.1"])
        try:
            page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
            page.set_default_timeout(TIMEOUT_MS)
            errors = []
            page.on("pageerror", lambda e: errors.append(f"uncaught exception: {e}"))
            try:
                page.goto(inp["url"] + "/#/")
                page.locator('main[data-loaded="true"]').wait_for()
                err = page.locator('[data-test="error"]')
                err.first.wait_for()
                check("without the token the jobs page says it is not allowed",
                      err.first.get_attribute("data-status") == "401", err.first.get_attribute("data-status"))
                check("the token field is shown", page.locator('[data-test="token-form"]').is_visible())
                page.fill('[data-test="token-input"]', inp["token"])
                page.click('[data-test="token-save"]')
                row = page.locator(f'[data-test="job-row"][data-job="{inp["job"]}"]')
                row.wait_for()
                check("with the token the jobs page shows the job", row.count() == 1)
                page.screenshot(path=os.path.join(inp["artifacts"], "readtoken-jobs.png"), full_page=True)

                res = page.goto(f"http://rebind.test:{port}/")
                check("the dashboard under a rebound name is refused", res.status == 403, str(res.status))
                got = page.evaluate("""async () => {
                    const res = await fetch("/api/v1/jobs", {headers: {"Authorization": "Bearer " + arguments[0]}});
                    return {status: res.status, text: await res.text()};
                }""".replace("arguments[0]", json.dumps(inp["token"])))
                check("the API under a rebound name is refused", got["status"] == 403 and inp["job"] not in got["text"],
                      json.dumps(got))
                check("no uncaught exception", not errors, "; ".join(errors))
            except Exception:
                page.screenshot(path=os.path.join(inp["artifacts"], "readtoken-failure.png"), full_page=True)
                raise
        finally:
            browser.close()
    for what in done:
        log("ok", what)
    json.dump({"checked": done}, sys.stdout)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        log("FAIL:", e)
        sys.exit(1)
