"""dashboard.py: clicks through tidemark serve's dashboard in a real chromium.

Run by e2e/browser_test.go (TestBrowserDashboard) with the test venv's python:

    python dashboard.py INPUT.json

INPUT holds the server's url, the token, the artifacts folder, and for each
job the CLI's own `runs --json`, `bookmark show --json` and `plan --json`, the job to click
through, the run to rewind it to, and what that rewind must undo and delete.
The script opens the jobs page, the job's page and the pages of its runs,
checks the numbers they show against the CLI's, rewinds the job with purge
through the confirmation dialog, and prints on stdout one JSON object:
{"screenshots": [...], "checked": [...], "reset": <the reset's answer>}.
It exits non-zero on the first mismatch, and on any console error or
uncaught exception in a page. The selectors are serve/web/SELECTORS.md's.
"""

import json
import os
import sys

from playwright.sync_api import sync_playwright

TIMEOUT_MS = 15000


class Check:
    """Check records what was checked, and fails with a message."""

    def __init__(self):
        self.done = []

    def eq(self, what, got, want):
        if got != want:
            raise AssertionError(f"{what}: got {got!r}, want {want!r}")
        self.done.append(what)

    def true(self, what, ok, detail=""):
        if not ok:
            raise AssertionError(f"{what}: {detail}")
        self.done.append(what)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def fmt_int(n):
    """fmt_int is TM.fmt.int: en-US digit grouping."""
    return f"{int(n):,}"


def total(counts, field):
    return sum(int(c.get(field) or 0) for c in (counts or {}).values())


class Dashboard:
    """Dashboard drives one page of the dashboard and gathers its errors."""

    def __init__(self, page, inp, check):
        self.page = page
        self.inp = inp
        self.check = check
        self.errors = []
        self.shots = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"uncaught exception: {e}"))
        page.set_default_timeout(TIMEOUT_MS)

    def _console(self, msg):
        if msg.type == "error":
            self.errors.append(f"console error: {msg.text} ({msg.location})")

    def assert_no_errors(self, where):
        if self.errors:
            raise AssertionError(f"{where}: errors in the page:\n  " + "\n  ".join(self.errors))

    def open(self, route):
        self.page.goto(self.inp["url"] + "/#" + route)

    def shot(self, name):
        path = os.path.join(self.inp["artifacts"], name + ".png")
        self.page.screenshot(path=path, full_page=True)
        self.shots.append(path)
        log(f"screenshot {path}")

    def api(self, path, method="GET", body=None, headers=None):
        """api calls the JSON API from inside the page (same origin, cookies)."""
        return self.page.evaluate(
            """async ([path, method, body, headers]) => {
                const init = {method, headers: Object.assign({"Accept": "application/json"}, headers || {}),
                              credentials: "same-origin"};
                if (body !== null) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
                const res = await fetch("api/v1" + path, init);
                const text = await res.text();
                let data = null;
                try { data = JSON.parse(text); } catch (e) { data = text; }
                return {status: res.status, data};
            }""",
            [path, method, body, headers],
        )

    def text(self, locator):
        return locator.inner_text().strip()


def check_jobs_page(d, c):
    """The jobs page: one row per job, its last run's status and counts."""
    d.open("/")
    for job, runs in d.inp["runs"].items():
        row = d.page.locator(f'[data-test="job-row"][data-job="{job}"]')
        row.wait_for()
        last = runs[0]
        c.eq(f"jobs page: {job} last run", row.get_attribute("data-run"), last["run_id"])
        c.eq(f"jobs page: {job} status", row.get_attribute("data-status"), last["status"])
        c.eq(f"jobs page: {job} status shown", d.text(row.locator('[data-test="status"]')), last["status"])
        rows_in, rows_out = total(last.get("sources"), "rows"), total(last.get("sinks"), "rows")
        c.eq(f"jobs page: {job} rows in", d.text(row.locator('[data-test="rows-in"]')), fmt_int(rows_in))
        c.eq(f"jobs page: {job} rows out", d.text(row.locator('[data-test="rows-out"]')), fmt_int(rows_out))
        backlog = total(d.inp["plan"][job].get("sources"), "files")
        c.eq(f"jobs page: {job} backlog files", d.text(row.locator('[data-test="backlog-files"]')), fmt_int(backlog))
        version = str(d.inp["bookmark"][job]["version"])
        c.eq(f"jobs page: {job} bookmark version", d.text(row.locator('[data-test="version"]')), version)
    rows = d.page.locator('[data-test="job-row"]').count()
    c.eq("jobs page: job rows", rows, len(d.inp["runs"]))
    d.assert_no_errors("jobs page")
    d.shot("1-jobs")


def check_job_page(d, c, job):
    """A job's page, reached by clicking the job: every run with its status and rows."""
    d.page.locator(f'[data-test="job-row"][data-job="{job}"] [data-test="job-link"]').click()
    d.page.locator(f'[data-test="job-name"][data-job="{job}"]').wait_for()
    runs = d.inp["runs"][job]
    d.page.locator('[data-test="run-row"]').nth(len(runs) - 1).wait_for()
    c.eq(f"job page {job}: run rows", d.page.locator('[data-test="run-row"]').count(), len(runs))
    for r in runs:
        row = d.page.locator(f'[data-test="run-row"][data-run="{r["run_id"]}"]')
        c.eq(f"job page {job}: run {r['run_id']} status", row.get_attribute("data-status"), r["status"])
        c.eq(f"job page {job}: run {r['run_id']} rows in",
             d.text(row.locator('[data-test="rows-in"]')), fmt_int(total(r.get("sources"), "rows")))
        c.eq(f"job page {job}: run {r['run_id']} rows out",
             d.text(row.locator('[data-test="rows-out"]')), fmt_int(total(r.get("sinks"), "rows")))
    for chart in ("chart-rows", "chart-bytes", "chart-duration"):
        box = d.page.locator(f'[data-test="{chart}"]')
        c.eq(f"job page {job}: {chart} points", box.get_attribute("data-points"), str(len(runs)))
        c.true(f"job page {job}: {chart} drawn", box.locator("canvas").count() > 0, "no canvas")
    bm = d.inp["bookmark"][job]
    c.eq(f"job page {job}: bookmark version", d.text(d.page.locator('[data-test="bookmark-version"]')), str(bm["version"]))
    c.eq(f"job page {job}: bookmark run", d.text(d.page.locator('[data-test="bookmark-run"]')), bm["run_id"])
    d.assert_no_errors(f"job page {job}")
    d.shot("2-job")


def check_run_page(d, c, job, r, shot):
    """A run's page: files and rows per source and sink, the error of a failed run."""
    d.open(f"/jobs/{job}/runs/{r['run_id']}")
    d.page.locator(f'[data-test="run-id"][data-run="{r["run_id"]}"]').wait_for()
    what = f"run page {r['run_id']}"
    for kind, key in (("source-row", "sources"), ("sink-row", "sinks")):
        for ctx, counts in (r.get(key) or {}).items():
            row = d.page.locator(f'[data-test="{kind}"][data-ctx="{ctx}"]')
            row.wait_for()
            c.eq(f"{what}: {ctx} files", d.text(row.locator('[data-test="files"]')), fmt_int(counts.get("files", 0)))
            c.eq(f"{what}: {ctx} rows", d.text(row.locator('[data-test="rows"]')), fmt_int(counts.get("rows", 0)))
            if counts.get("rejected"):
                other = d.text(row.locator('[data-test="other"]'))
                c.true(f"{what}: {ctx} rejected", f"rejected {fmt_int(counts['rejected'])}" in other,
                       f"the row says {other!r}, want rejected {counts['rejected']}")
    c.eq(f"{what}: status", d.page.locator('[data-test="run-status"] [data-test="status"]').get_attribute("data-status"),
         r["status"])
    files = total(r.get("sources"), "files")
    if r["status"] == "succeeded" and files:
        rng = d.page.locator('[data-test="inputs-range"]')
        c.eq(f"{what}: input manifest total", rng.get_attribute("data-total"), str(files))
    if r["status"] == "succeeded" and files and r.get("mode") == "enable" and not r.get("undone"):
        # The run committed a version: the page shows what it changed in the bookmark.
        diff = d.page.locator('[data-test="bookmark-diff"]')
        diff.wait_for()
        c.eq(f"{what}: bookmark diff version", diff.get_attribute("data-version"), str(r["version"]))
        ctxs = sorted({x.get_attribute("data-ctx") for x in diff.locator('[data-test="diff-row"]').all()})
        read = sorted(k for k, v in (r.get("sources") or {}).items() if v.get("files"))
        c.true(f"{what}: a diff row per source ctx read", set(read) <= set(ctxs),
               f"diff rows name {ctxs}, the run read {read}")
    if r["status"] == "failed":
        err = d.page.locator('[data-test="run-error"]')
        err.wait_for()
        c.true(f"{what}: error shown", "bad.csv" in d.text(err), f"the error {d.text(err)!r} does not name bad.csv")
    d.assert_no_errors(what)
    if shot:
        d.shot(shot)


def check_api(d, c, job):
    """The API the pages read agrees with the CLI (fetched from inside the page)."""
    got = d.api(f"/jobs/{job}/runs?limit=100")
    c.eq(f"api: GET /jobs/{job}/runs status", got["status"], 200)
    want = [(r["run_id"], r["status"]) for r in d.inp["runs"][job]]
    c.eq(f"api: {job} runs", [(r["run_id"], r["status"]) for r in got["data"]["runs"]], want)


def rewind(d, c, job):
    """Rewinds the job with purge through the confirmation dialog, typing the token."""
    to = d.inp["rewind_to"]
    d.open(f"/jobs/{job}")
    d.page.locator('[data-test="token-form"]').wait_for()
    d.page.locator('[data-test="token-input"]').fill(d.inp["token"])
    d.page.locator('[data-test="token-save"]').click()
    d.page.locator(f'[data-test="rewind"][data-run="{to}"]').click()
    d.page.locator('[data-test="confirm-dialog"]').wait_for()
    d.page.locator('[data-test="confirm-purge"]').check()
    body = d.page.locator('[data-test="confirm-body"][data-purge="true"]')
    body.locator('[data-test="dry-delete"]').wait_for()
    undo = [d.text(x) for x in body.locator('[data-test="dry-undo-item"]').all()]
    c.eq("confirmation: runs to undo", sorted(undo), sorted(d.inp["undo"]))
    delete = [d.text(x) for x in body.locator('[data-test="dry-delete-item"]').all()]
    c.eq("confirmation: files to delete", sorted(os.path.basename(x) for x in delete), sorted(d.inp["delete"]))
    c.true("confirmation: the token is not in the page", d.inp["token"] not in d.page.content(), "it is")
    d.shot("4-confirm")
    with d.page.expect_response(lambda res: res.request.method == "POST" and "/reset" in res.url) as info:
        d.page.locator('[data-test="confirm-ok"]:enabled').click()
    res = info.value
    c.eq("reset: answer status", res.status, 200)
    answer = res.json()
    done = d.page.locator('[data-test="reset-done"]')
    done.wait_for()
    deleted = [d.text(x) for x in done.locator('[data-test="done-deleted-item"]').all()]
    c.eq("after the rewind: files deleted", sorted(os.path.basename(x) for x in deleted), sorted(d.inp["delete"]))
    d.shot("5-rewound")
    d.page.locator('[data-test="confirm-cancel"]').click()
    d.page.locator(f'[data-test="bookmark-run"]:text-is("{to}")').wait_for()
    for run in d.inp["undo"]:
        row = d.page.locator(f'[data-test="run-row"][data-run="{run}"]')
        c.eq(f"job page after the rewind: run {run} undone", row.get_attribute("data-undone"), "true")
    # The rewind is in the job's history, asked by serve, and marked on the charts.
    hist = d.page.locator(f'[data-test="history-row"][data-kind="rewind"][data-run="{to}"]')
    hist.first.wait_for()
    by = hist.first.get_attribute("data-by") or ""
    c.true("job page after the rewind: the history row names serve as who asked", by.startswith("serve "),
           f"data-by is {by!r}")
    c.true("job page after the rewind: the history row says when",
           d.text(hist.first.locator('[data-test="history-at"]')).endswith("UTC"), "no time")
    marks = d.page.locator('[data-test="chart-rows"]').get_attribute("data-marks")
    c.true("job page after the rewind: the charts mark it", int(marks or 0) >= 1, f"data-marks is {marks!r}")
    d.assert_no_errors("rewind")
    d.shot("6-job-after-rewind")
    return answer


def main():
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    c = Check()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ["TIDEMARK_TEST_CHROMIUM"], headless=True)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            d = Dashboard(page, inp, c)
            job = inp["job"]
            try:
                check_jobs_page(d, c)
                check_job_page(d, c, job)
                check_api(d, c, job)
                runs = inp["runs"][job]
                first = next(r for r in runs if r["run_id"] == inp["rewind_to"])
                check_run_page(d, c, job, first, "3-run")
                for r in runs:
                    if r is not first:
                        check_run_page(d, c, job, r, "3-run-" + r["status"] if r["status"] == "failed" else None)
                for other, runs in inp["runs"].items():
                    if other != job:
                        check_run_page(d, c, other, runs[0], "3-run-" + other)
                answer = rewind(d, c, job)
            except Exception:
                d.shot("failure")
                raise
        finally:
            browser.close()
    for what in c.done:
        log("ok", what)
    json.dump({"screenshots": d.shots, "checked": c.done, "reset": answer}, sys.stdout)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        log("FAIL:", e)
        sys.exit(1)
