"""Coding-agent work, by hand: six tasks over May and June 2026 with their plans, user
instructions, decisions and reasons, errors and fixes, commands with real-looking output,
trace decisions and agent sessions; and the questions an agent asks about them."""

from __future__ import annotations

from benchmarks.retrieval.corpus import Book

PYTEST_REFUND = """\
============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.2.1, pluggy-1.5.0
rootdir: /srv/ledgerly
collected 412 items

tests/billing/test_invoices.py ........................................ [ 10%]
tests/billing/test_refunds.py ....F.....                                 [ 12%]

=================================== FAILURES ===================================
__________________________ test_partial_refund_rounding ________________________

    def test_partial_refund_rounding():
        invoice = make_invoice(total=Decimal("100.00"), currency="EUR")
>       assert refund(invoice, Decimal("33.335")).amount == Decimal("33.34")
E       AssertionError: assert Decimal('33.33') == Decimal('33.34')

tests/billing/test_refunds.py:88: AssertionError
=========================== short test summary info ============================
FAILED tests/billing/test_refunds.py::test_partial_refund_rounding
======================== 1 failed, 411 passed in 41.27s ========================
"""

PG_RESTORE = """\
pg_restore: connecting to database for restore
pg_restore: creating TABLE "public.invoice_lines"
pg_restore: while PROCESSING TOC:
pg_restore: from TOC entry 3412; 1259 16742 TABLE invoice_lines ledgerly
pg_restore: error: could not execute query: ERROR:  type "mediumtext" does not exist
LINE 4:     description mediumtext NOT NULL,
                        ^
pg_restore: warning: errors ignored on restore: 1
"""

DOCKER_BUILD = """\
#9 [builder 4/7] RUN pip install --no-cache-dir -r requirements.txt
#9 3.912 Collecting weasyprint==61.2
#9 9.204   error: subprocess-exited-with-error
#9 9.204   × Building wheel for cffi (pyproject.toml) did not run successfully.
#9 9.205   │ exit code: 1
#9 9.205   ╰─> c/_cffi_backend.c:15:10: fatal error: ffi.h: No such file or directory
#9 9.210 ERROR: Failed building wheel for cffi
#9 ERROR: process "/bin/sh -c pip install --no-cache-dir -r requirements.txt" did not complete
successfully: exit code: 1
------
 > [builder 4/7] RUN pip install --no-cache-dir -r requirements.txt:
failed to solve: process "/bin/sh -c pip install --no-cache-dir -r requirements.txt" did not
complete successfully: exit code: 1
"""  # noqa: RUF001 (docker prints these signs)

NPM_ERESOLVE = """\
npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR!
npm ERR! While resolving: checkout-web@0.9.0
npm ERR! Found: react@18.3.1
npm ERR! node_modules/react
npm ERR!   react@"^18.3.1" from the root project
npm ERR!
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^17.0.0" from react-credit-cards@0.8.3
npm ERR! node_modules/react-credit-cards
npm ERR!   react-credit-cards@"^0.8.3" from the root project
npm ERR!
npm ERR! Fix the upstream dependency conflict, or retry
npm ERR! this command with --force or --legacy-peer-deps
"""

AUTH_TRACE = """\
Traceback (most recent call last):
  File "/srv/ledgerly/tests/auth/test_sessions.py", line 57, in test_token_refresh_race
    new = client.post("/auth/refresh", json={"token": old.refresh}).json()
  File "/srv/ledgerly/ledgerly/auth/tokens.py", line 131, in rotate_refresh_token
    raise TokenReuseError("ERR_TOKEN_REUSED: refresh token already rotated")
ledgerly.auth.errors.TokenReuseError: ERR_TOKEN_REUSED: refresh token already rotated
"""

DJANGO_WARN = """\
System check identified some issues:

WARNINGS:
?: (urls.W005) URL namespace 'admin' isn't unique. You may not be able to reverse all URLs
in this namespace
ledgerly/settings/base.py: RemovedInDjango50Warning: The USE_L10N setting is deprecated.
Starting with Django 5.0, localized formatting of data will always be enabled.
Traceback (most recent call last):
  File "/srv/ledgerly/ledgerly/reports/forms.py", line 12, in <module>
    from django.utils.translation import ugettext_lazy as _
ImportError: cannot import name 'ugettext_lazy' from 'django.utils.translation'
"""

GIT_LOG = """\
9f3e2a1 (HEAD -> feat/pg15) Switch invoice_lines.description to text for PostgreSQL
c41d7b0 Add pgloader casting rules for mediumtext and tinyint(1)
5e08aa3 Revert "Use numeric(12,4) for all money columns"
77b2c19 Use numeric(12,4) for all money columns
e1a90f4 Pin psycopg 3.1.19 and drop mysqlclient from the prod image
"""

TWINE = """\
Uploading distributions to https://pkgs.internal.ledgerly.io/simple/
Uploading ledgerly_client-2.4.0-py3-none-any.whl
100% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 41.2/41.2 kB • 00:00
WARNING  Error during upload. Retry with the --verbose option for more details.
ERROR    HTTPError: 403 Forbidden from https://pkgs.internal.ledgerly.io/simple/
         Forbidden: token lacks the packages:write scope for repository 'python-internal'
"""


def write(b: Book) -> None:
    """The six coding tasks and their questions."""
    _billing(b)
    _auth(b)
    _checkout(b)
    _worker(b)
    _django(b)
    _release(b)


def _billing(b: Book) -> None:
    t = b.task("billing", "2026-05-04 09:10", "Migrate billing service to PostgreSQL 15",
               goal="Move the ledgerly billing database from MySQL 8 to PostgreSQL 15 with no"
               " lost invoices",
               plan=["Inventory schema and data types", "Convert schema with pgloader",
                     "Dual-write period", "Cut over reads", "Decommission MySQL"])  # fmt: skip
    s = b.session("billing.s1", "2026-05-04 09:20", "billing migration kickoff", task=t)
    b.message("billing.scope", t, "2026-05-04 09:15",
              "Keep the old MySQL replica readable until finance signs off the June close;"
              " do not drop it before then.")  # fmt: skip
    b.message("billing.window", t, "2026-05-06 10:02",
              "The cutover window is Saturday 23 May between 02:00 and 04:00 CET, nobody"
              " books invoices then.")  # fmt: skip
    b.entry("billing.pgloader", t, "2026-05-05 14:30", "decision",
            "Use pgloader for the schema and bulk copy instead of hand-written DDL",
            detail="pgloader casts most MySQL types by itself and copies 40M rows in about 25"
            " minutes on the staging box; hand-written DDL would drift from the ORM models.",
            tags=("migration", "pgloader"))  # fmt: skip
    b.command("billing.restore", t, "2026-05-07 11:05",
              "pg_restore -d ledgerly_pg15 --no-owner dumps/ledgerly-2026-05-07.dump",
              exit_code=1, stderr=PG_RESTORE)  # fmt: skip
    b.entry("billing.mediumtext", t, "2026-05-07 11:40", "error",
            "pg_restore fails: type mediumtext does not exist on invoice_lines.description",
            detail="MySQL's mediumtext has no PostgreSQL equivalent; the dump kept the MySQL type.",
            resolution="Added a pgloader CAST rule mediumtext to text and changed the column to"
            " text (commit 9f3e2a1).", command="pg_restore")  # fmt: skip
    b.command("billing.gitlog", t, "2026-05-08 16:20", "git log --oneline -5", stdout=GIT_LOG)
    b.entry("billing.numeric_revert", t, "2026-05-08 16:10", "decision",
            "Reverted the switch of every money column to numeric(12,4); keep numeric(12,2)",
            detail="Four decimal places broke the invoice PDF totals and the bank export format"
            " expects exactly two; the revert is commit 5e08aa3.",
            tags=("money", "schema"))  # fmt: skip
    b.command("billing.pytest", t, "2026-05-11 15:02", "pytest tests/billing -q",
              exit_code=1, stdout=PYTEST_REFUND)  # fmt: skip
    b.entry("billing.rounding", t, "2026-05-11 15:30", "error",
            "Partial refunds round half-down after the move: 33.335 EUR gives 33.33",
            detail="PostgreSQL's numeric rounds half away from zero but our refund() quantized"
            " with ROUND_HALF_EVEN before storing.",
            resolution="refund() now quantizes with ROUND_HALF_UP in ledgerly/billing/money.py,"
            " like the MySQL code path did.")  # fmt: skip
    b.entry("billing.pgbouncer", t, "2026-05-13 09:45", "decision",
            "Put PgBouncer in transaction pooling mode in front of PostgreSQL 15",
            detail="The Celery workers open 300 connections at peak; max_connections on the"
            " db.m6g.large instance is 200.", tags=("postgres", "connections"))  # fmt: skip
    b.decision("billing.dualwrite", t, "2026-05-15 10:00",
               "Enable dual writes behind the BILLING_DUAL_WRITE flag for 10% of tenants",
               agent="planner")  # fmt: skip
    b.entry(
        "billing.lag",
        t,
        "2026-05-19 08:30",
        "discovery",
        "Dual-write lag peaks at 1.8 s during the nightly invoice run at 01:00 UTC",
        detail="Measured from the outbox timestamps; it stays under 200 ms the rest of the day.",
    )
    b.chat("billing.c1", s, "2026-05-04 09:20", [
        ("user", "Before you touch anything: how big is the billing database right now?"),
        ("assistant", "I'll check the table sizes on the replica first."),
    ])  # fmt: skip
    b.tool_exchange("billing.size", s, "2026-05-04 09:22",
                    "mysql -h replica-1 -e \"SELECT table_name, round(data_length/1024/1024)"
                    " AS mb FROM information_schema.tables WHERE table_schema='ledgerly' ORDER"
                    " BY data_length DESC LIMIT 3\"",
                    "table_name\tmb\ninvoice_lines\t18342\ninvoices\t6120\npayments\t2877",
                    why="Checking table sizes on the replica")  # fmt: skip
    b.turn(
        "billing.sizesummary",
        s,
        "2026-05-04 09:24",
        "assistant",
        "The billing schema is about 27 GB: invoice_lines 18.3 GB, invoices 6.1 GB and"
        " payments 2.9 GB. A pgloader copy should fit in one maintenance window.",
    )

    b.ask(
        "single-fact",
        "which tool did we choose to convert the billing schema to postgres?",
        "billing.pgloader",
    )
    b.ask(
        "single-fact",
        "why did we revert the numeric(12,4) money columns?",
        "billing.numeric_revert",
    )
    b.ask("single-fact", "when is the billing cutover window?", "billing.window")
    b.ask("single-fact", "how did we fix the partial refund rounding bug?", "billing.rounding")
    b.ask(
        "single-fact", "how big is the invoice_lines table?", "billing.sizesummary", "billing.size"
    )
    b.ask("single-fact", "what pooling mode did we pick for pgbouncer?", "billing.pgbouncer")
    b.ask("identifier", "what does commit 5e08aa3 do?", "billing.numeric_revert", "billing.gitlog")
    b.ask("identifier", 'type "mediumtext" does not exist', "billing.mediumtext", "billing.restore")
    b.ask(
        "identifier",
        "tests/billing/test_refunds.py::test_partial_refund_rounding",
        "billing.pytest",
    )
    b.ask("identifier", "what was the BILLING_DUAL_WRITE flag rolled out to?", "billing.dualwrite")
    b.ask("identifier", "ledgerly-2026-05-07.dump restore output", "billing.restore")
    b.ask(
        "paraphrase",
        "how many simultaneous database links do the background job processes"
        " need at the busiest moment?",
        "billing.pgbouncer",
    )
    b.ask(
        "paraphrase",
        "what did they request about leaving the previous database copy accessible"
        " till accounting approves?",
        "billing.scope",
    )
    b.ask("paraphrase", "how long does replication trail behind overnight?", "billing.lag")
    b.ask(
        "multi-fact",
        "what went wrong restoring the billing dump and how was it fixed?",
        "billing.restore",
        "billing.mediumtext",
    )
    b.ask(
        "multi-fact",
        "list the decisions made for the billing migration",
        "billing.pgloader",
        "billing.numeric_revert",
        "billing.pgbouncer",
    )
    b.ask(
        "temporal",
        "what did the refund tests fail on in mid May?",
        "billing.pytest",
        "billing.rounding",
    )
    b.ask(
        "temporal",
        "what did we find out about dual-write lag last month?",
        "billing.lag",
        asked_at="2026-06-10 09:00",
    )


def _auth(b: Book) -> None:
    t = b.task("auth", "2026-05-18 08:40", "Fix flaky auth tests in CI",
               goal="test_sessions passes 50 CI runs in a row",
               plan=["Reproduce the flake locally", "Find the race", "Fix and add a regression"
                     " test", "Run CI 50 times"])  # fmt: skip
    s = b.session("auth.s1", "2026-05-18 08:45", "flaky auth tests", task=t)
    b.message("auth.ask", t, "2026-05-18 08:41",
              "test_token_refresh_race fails about one run in eight on CI but never on my"
              " laptop. Find out why before Friday's release.")  # fmt: skip
    b.command("auth.trace", t, "2026-05-18 09:30",
              "pytest tests/auth/test_sessions.py -k refresh_race --count 40 -x",
              exit_code=1, stdout="collected 40 items\n.......F", stderr=AUTH_TRACE)  # fmt: skip
    b.entry("auth.race", t, "2026-05-18 13:15", "discovery",
            "Two refresh requests in the same millisecond both read the old token before either"
            " rotation commits", detail="The test client retries on 502 from the proxy, so CI's"
            " slower proxy makes the second request much more likely.",
            tags=("race", "auth"))  # fmt: skip
    b.entry("auth.fix", t, "2026-05-19 10:05", "decision",
            "Rotate refresh tokens with SELECT ... FOR UPDATE SKIP LOCKED and a 5 second grace"
            " window for the previous token", detail="A grace window lets a retried request"
            " succeed; the lock stops a double rotation.", tags=("auth",))  # fmt: skip
    b.entry("auth.redis_rejected", t, "2026-05-19 09:40", "decision",
            "Rejected a Redis lock for token rotation",
            detail="It adds a network hop to every login and the ops team does not want Redis"
            " on the auth path.", tags=("auth", "rejected"))  # fmt: skip
    b.command("auth.ci50", t, "2026-05-21 17:10",
              "gh workflow run auth-soak.yml -f runs=50 && gh run watch",
              stdout="✓ auth-soak · 50/50 jobs passed in 38m12s")  # fmt: skip
    b.decision("auth.quarantine", t, "2026-05-18 11:00",
               "Quarantine test_token_refresh_race with @pytest.mark.flaky(reruns=2) until the"
               " fix lands", agent="ci-guard")  # fmt: skip
    b.chat("auth.c1", s, "2026-05-18 08:45", [
        ("user", "Is it the proxy or our code?"),
        ("assistant", "Our code. The proxy only makes the window wider: the token rotation in"
         " ledgerly/auth/tokens.py reads then writes without a lock, so two refreshes can both"
         " pass the check."),
        ("user", "ok. who owns tokens.py?"),
        ("assistant", "git blame puts most of rotate_refresh_token on Dana Whitfield; the last"
         " change was hers in March."),
    ])  # fmt: skip

    b.ask("single-fact", "why is the refresh race test flaky on CI?", "auth.race", "auth.c1.2")
    b.ask("single-fact", "why did we not use redis to lock token rotation?", "auth.redis_rejected")
    b.ask("single-fact", "who owns the token rotation code?", "auth.c1.4")
    b.ask("single-fact", "did the auth soak run pass?", "auth.ci50")
    b.ask("identifier", "ERR_TOKEN_REUSED", "auth.trace")
    b.ask("identifier", "TokenReuseError in rotate_refresh_token", "auth.trace")
    b.ask("identifier", "auth-soak.yml results", "auth.ci50")
    b.ask(
        "paraphrase",
        "which colleague wrote most of that module, per the annotate history?",
        "auth.c1.4",
    )
    b.ask(
        "paraphrase",
        "what temporary measure kept the unreliable check from blocking merges?",
        "auth.quarantine",
    )
    b.ask("paraphrase", "how long may a superseded credential still be accepted?", "auth.fix")
    b.ask(
        "multi-fact",
        "what options did we consider for fixing the token race and which won?",
        "auth.fix",
        "auth.redis_rejected",
    )
    b.ask("temporal", "what did the user ask me to do on May 18?", "auth.ask")


def _checkout(b: Book) -> None:
    t = b.task("checkout", "2026-05-25 10:00", "Ship mobile web checkout",
               goal="Checkout works on iOS Safari and Android Chrome with Apple Pay and cards",
               plan=["Upgrade React to 18", "Card form", "Apple Pay", "E2E tests",
                     "Release behind a flag"])  # fmt: skip
    s = b.session("checkout.s1", "2026-05-26 09:00", "checkout card form", task=t)
    b.command("checkout.eresolve", t, "2026-05-26 09:30", "npm install react-credit-cards@0.8.3",
              exit_code=1, stderr=NPM_ERESOLVE)  # fmt: skip
    b.entry(
        "checkout.cards_lib",
        t,
        "2026-05-26 10:15",
        "decision",
        "Drop react-credit-cards and build the card form on Stripe Elements",
        detail="react-credit-cards is unmaintained and wants react 17; --legacy-peer-deps"
        " would hide the conflict instead of fixing it.",
        tags=("frontend", "payments"),
    )
    b.message("checkout.budget", t, "2026-05-25 10:05",
              "The checkout bundle must stay under 180 KB gzipped; marketing pages already eat"
              " the rest of the budget.")  # fmt: skip
    b.entry("checkout.safari", t, "2026-06-02 14:20", "error",
            "Apple Pay button missing on iOS 17.5 Safari",
            detail="canMakePayments() returned false because the domain verification file"
            " was served as text/html.", resolution="Serve /.well-known/apple-developer-merchantid"
            "-domain-association with application/octet-stream from the CDN rule.")  # fmt: skip
    b.command("checkout.playwright", t, "2026-06-04 16:45",
              "npx playwright test e2e/checkout.spec.ts --project=webkit",
              exit_code=1, stdout="Running 14 tests using 2 workers\n  ✘ 9 [webkit] › checkout"  # noqa: RUF001
              ".spec.ts:88:3 › pays with saved card (31.2s)\n    Error: Timed out 30000ms waiting"  # noqa: RUF001
              " for expect(locator).toBeVisible()\n    Locator: getByRole('button', { name:"
              " 'Pay €42.00' })\n  13 passed, 1 failed")  # fmt: skip
    b.entry(
        "checkout.flag",
        t,
        "2026-06-08 11:00",
        "decision",
        "Release checkout v2 behind the LaunchDarkly flag checkout-v2 at 5% of mobile traffic",
        detail="Payments wants a week of conversion data before 50%.",
    )
    b.chat("checkout.c1", s, "2026-05-26 09:00", [
        ("user", "Can we keep the old card library? The designers like its animated card."),
        ("assistant", "Not safely: it pins react 17 as a peer and has had no release since 2021."
         " I can recreate the flip animation with CSS in about 60 lines."),
        ("user", "Fine, do that. Keep the animation subtle, max 300ms."),
    ])  # fmt: skip

    b.ask("single-fact", "what is the bundle size limit for checkout?", "checkout.budget")
    b.ask("single-fact", "why did apple pay not show up on safari?", "checkout.safari")
    b.ask("single-fact", "what card form library are we using now?", "checkout.cards_lib")
    b.ask("single-fact", "how long should the card flip animation be?", "checkout.c1.3")
    b.ask("identifier", "npm ERR! code ERESOLVE react-credit-cards", "checkout.eresolve")
    b.ask("identifier", "checkout.spec.ts:88 pays with saved card", "checkout.playwright")
    b.ask("identifier", "what rollout percentage is checkout-v2 at?", "checkout.flag")
    b.ask(
        "identifier",
        "apple-developer-merchantid-domain-association content type",
        "checkout.safari",
    )
    b.ask(
        "paraphrase",
        "what did the visual team want to retain from the previous widget?",
        "checkout.c1.1",
    )
    b.ask("paraphrase", "how heavy may the compressed javascript for paying be?", "checkout.budget")
    b.ask(
        "multi-fact",
        "why did we abandon the old card library: what broke and what did we decide?",
        "checkout.eresolve",
        "checkout.cards_lib",
    )
    b.ask("temporal", "which e2e test failed on June 4?", "checkout.playwright")


def _worker(b: Book) -> None:
    t = b.task("worker", "2026-06-01 09:00", "Containerise the report worker",
               goal="The PDF report worker runs as a container on the ECS cluster",
               plan=["Write the Dockerfile", "Slim the image", "Health check",
                     "Deploy to staging", "Deploy to prod"])  # fmt: skip
    s = b.session("worker.s1", "2026-06-01 09:10", "report worker image", task=t)
    b.command("worker.build", t, "2026-06-01 10:20",
              "docker build -t ledgerly/report-worker:0.1.0 -f docker/worker.Dockerfile .",
              exit_code=1, stderr=DOCKER_BUILD)  # fmt: skip
    b.entry("worker.ffi", t, "2026-06-01 10:50", "error",
            "cffi wheel fails to build in the slim image: ffi.h missing",
            resolution="Install libffi-dev in the builder stage only; the runtime stage copies"
            " the built wheels.", command="docker build")  # fmt: skip
    b.entry("worker.base", t, "2026-06-01 09:30", "decision",
            "Base the worker image on python:3.11-slim-bookworm, not alpine",
            detail="WeasyPrint needs glibc builds of pango and cairo; musl wheels are missing"
            " and compiling them doubled the build time.", tags=("docker",))  # fmt: skip
    b.entry(
        "worker.size",
        t,
        "2026-06-03 15:00",
        "discovery",
        "Multi-stage build cut the report-worker image from 1.21 GB to 412 MB",
    )
    b.command("worker.health", t, "2026-06-05 12:10",
              "aws ecs describe-services --cluster staging --services report-worker",
              stdout='{"services": [{"serviceName": "report-worker", "runningCount": 0,'
              ' "desiredCount": 2, "events": [{"message": "(service report-worker) task'
              ' 3f9c1e stopped: Essential container in task exited: health check failed:'
              ' curl: not found"}]}]}')  # fmt: skip
    b.entry("worker.healthfix", t, "2026-06-05 12:40", "error",
            "ECS health check fails because curl is not in the slim image",
            resolution="Health check now runs python -c with urllib against /healthz instead of"
            " curl.")  # fmt: skip
    b.message("worker.memory", t, "2026-06-02 09:00",
              "Give the worker 2 GB of memory, not more: big reports should be split, not fed"
              " more RAM.")  # fmt: skip
    b.decision("worker.deploy_prod", t, "2026-06-12 14:00",
               "Deploy report-worker 0.3.2 to prod with 3 tasks after 48h clean on staging",
               agent="deployer")  # fmt: skip
    b.chat("worker.c1", s, "2026-06-01 09:10", [
        ("user", "Which reports are slowest today?"),
        ("assistant", "The quarterly VAT report: 4 min 12 s on average, mostly in WeasyPrint"
         " rendering 600-page tables."),
    ])  # fmt: skip

    b.ask("single-fact", "why didn't we use alpine for the report worker image?", "worker.base")
    b.ask("single-fact", "how much memory should the report worker get?", "worker.memory")
    b.ask("single-fact", "how did we fix the ECS health check?", "worker.healthfix")
    b.ask("single-fact", "which report is the slowest?", "worker.c1.2")
    b.ask(
        "identifier", "fatal error: ffi.h: No such file or directory", "worker.build", "worker.ffi"
    )
    b.ask("identifier", "python:3.11-slim-bookworm", "worker.base")
    b.ask("identifier", "report-worker 0.3.2", "worker.deploy_prod")
    b.ask(
        "paraphrase",
        "how much smaller did the container get after splitting compilation into phases?",
        "worker.size",
    )
    b.ask("paraphrase", "should huge documents simply be given extra capacity?", "worker.memory")
    b.ask(
        "multi-fact",
        "what problems did the worker container hit on staging and in the build, and their fixes?",
        "worker.ffi",
        "worker.healthfix",
    )
    b.ask("temporal", "what did the describe-services output say on June 5?", "worker.health")


def _django(b: Book) -> None:
    t = b.task("django", "2026-06-15 09:00", "Upgrade Django 4.2 to 5.0",
               goal="ledgerly runs on Django 5.0 with no deprecation warnings",
               plan=["Fix deprecations on 4.2", "Bump to 5.0", "Run the suite",
                     "Staging soak"])  # fmt: skip
    s = b.session("django.s1", "2026-06-15 09:10", "django upgrade", task=t)
    b.command("django.check", t, "2026-06-15 09:40", "python manage.py check --deploy",
              exit_code=1, stderr=DJANGO_WARN)  # fmt: skip
    b.entry("django.ugettext", t, "2026-06-15 10:30", "error",
            "ugettext_lazy removed: ImportError in ledgerly/reports/forms.py",
            resolution="Replaced ugettext_lazy with gettext_lazy in 14 files with a codemod"
            " (django-upgrade --target-version 5.0).")  # fmt: skip
    b.entry("django.l10n", t, "2026-06-15 11:00", "decision",
            "Delete USE_L10N from settings instead of setting it to True",
            detail="Localized formatting is always on from 5.0, and the setting raises a"
            " warning.")  # fmt: skip
    b.command("django.pipbump", t, "2026-06-16 09:05",
              "pip install 'Django==5.0.6' 'django-filter==24.2' 'djangorestframework==3.15.1'",
              stdout="Successfully installed Django-5.0.6 django-filter-24.2"
              " djangorestframework-3.15.1 asgiref-3.8.1 sqlparse-0.5.0")  # fmt: skip
    b.entry("django.storages", t, "2026-06-17 14:00", "error",
            "DEFAULT_FILE_STORAGE is ignored on 5.0; invoice PDFs went to local disk on staging",
            resolution="Moved to the STORAGES dict with the S3 backend for default.")  # fmt: skip
    b.entry("django.postpone", t, "2026-06-18 10:00", "decision",
            "Postpone Django 5.1 until django-polymorphic supports it",
            detail="Its 3.1 release breaks on 5.1's new GeneratedField handling.")  # fmt: skip
    b.message("django.freeze", t, "2026-06-19 09:00",
              "Code freeze for the upgrade branch starts Monday 22 June; after that only fixes"
              " for failing tests.")  # fmt: skip
    b.chat("django.c1", s, "2026-06-15 09:10", [
        ("user", "Use django-upgrade for the mechanical stuff, don't hand-edit imports."),
        ("assistant", "Will do. I'll run it with --target-version 5.0 over the whole repo and"
         " commit its changes separately so the review stays readable."),
    ])  # fmt: skip

    b.ask("single-fact", "what did we do about the USE_L10N setting?", "django.l10n")
    b.ask("single-fact", "why are we not going to django 5.1 yet?", "django.postpone")
    b.ask(
        "single-fact",
        "where did invoice pdfs end up on staging after the upgrade?",
        "django.storages",
    )
    b.ask("single-fact", "when does the code freeze for the upgrade start?", "django.freeze")
    b.ask("identifier", "cannot import name 'ugettext_lazy'", "django.check", "django.ugettext")
    b.ask("identifier", "which version of djangorestframework did we install?", "django.pipbump")
    b.ask("identifier", "DEFAULT_FILE_STORAGE", "django.storages")
    b.ask("identifier", "urls.W005", "django.check")
    b.ask("paraphrase", "should source rewrites be done manually or automatically?", "django.c1.1")
    b.ask(
        "multi-fact",
        "what broke when moving ledgerly to django 5.0?",
        "django.ugettext",
        "django.storages",
    )
    b.ask(
        "temporal",
        "what did the user say about the freeze last week?",
        "django.freeze",
        asked_at="2026-06-24 10:00",
    )
    b.ask(
        "temporal",
        "which packages did we install yesterday?",
        "django.pipbump",
        asked_at="2026-06-17 09:00",
    )


def _release(b: Book) -> None:
    t = b.task(
        "release",
        "2026-06-22 09:00",
        "Set up package registry and release pipeline",
        goal="ledgerly-client releases publish from CI to an internal registry",
        plan=["Pick a registry", "CI publish job", "Signed tags", "Document the flow"],
    )
    s = b.session("release.s1", "2026-06-22 09:05", "release pipeline", task=t)
    b.entry("release.registry", t, "2026-06-22 11:30", "decision",
            "Use GitHub Packages as the internal registry, not a self-hosted devpi",
            detail="SSO and audit logs come with the org plan; devpi would need backups and"
            " patching by us.", tags=("registry", "release"))  # fmt: skip
    b.command(
        "release.twine",
        t,
        "2026-06-23 15:10",
        "twine upload --repository ledgerly dist/*",
        exit_code=1,
        stdout=TWINE,
    )
    b.entry("release.token", t, "2026-06-23 15:40", "error",
            "Upload forbidden: CI token lacks packages:write",
            resolution="Use the workflow's GITHUB_TOKEN with permissions: packages: write in"
            " release.yml.")  # fmt: skip
    b.entry("release.sigstore", t, "2026-06-25 10:00", "decision",
            "Sign release tags with gitsign (Sigstore keyless) rather than GPG keys",
            detail="No long-lived keys to rotate; the CI identity signs.")  # fmt: skip
    b.message("release.semver", t, "2026-06-22 09:01",
              "Releases follow semver strictly; a breaking API change means a major bump even"
              " if it is small.")  # fmt: skip
    b.decision("release.tag", t, "2026-06-29 16:00", "Tag v2.4.1 and publish ledgerly-client"
               " 2.4.1 from the release workflow", agent="release-bot")  # fmt: skip
    b.chat("release.c1", s, "2026-06-22 09:05", [
        ("user", "Who has to approve a release?"),
        ("assistant", "Per CODEOWNERS, Marco Rossi or Dana Whitfield must approve the release"
         " PR; the workflow refuses tags without an approved PR."),
    ])  # fmt: skip

    b.ask("single-fact", "which registry did we pick, and why?", "release.registry")
    b.ask("single-fact", "how are release tags signed?", "release.sigstore")
    b.ask("single-fact", "who has to approve a release?", "release.c1.2")
    b.ask(
        "identifier",
        "403 Forbidden from https://pkgs.internal.ledgerly.io/simple/",
        "release.twine",
    )
    b.ask("identifier", "ledgerly_client-2.4.0-py3-none-any.whl", "release.twine")
    b.ask("identifier", "v2.4.1", "release.tag")
    b.ask(
        "paraphrase",
        "does a tiny incompatible interface tweak still need a big version increment?",
        "release.semver",
    )
    b.ask("paraphrase", "why not run our own python index server?", "release.registry")
    b.ask(
        "multi-fact",
        "why did publishing fail and what permission fixed it?",
        "release.twine",
        "release.token",
    )
    b.ask("temporal", "what did we release yesterday?", "release.tag")
