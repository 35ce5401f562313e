"""Generated families of labelled facts, where many near-identical records differ in one
detail (a date, a service, an error code), so that only the right one should rank first:
the nightly CI runs (one per day, some failing) and the on-call errors of a dozen
services. Deterministic: a `random.Random` with a fixed start."""

from __future__ import annotations

import random
from datetime import date, timedelta

from benchmarks.retrieval.corpus import Book

FAILING_TESTS = (
    ("tests/api/test_webhooks.py::test_retry_backoff_caps_at_one_hour",
     "AssertionError: assert 7200 <= 3600"),
    ("tests/billing/test_invoices.py::test_invoice_number_is_gapless",
     "AssertionError: gap between INV-2026-004417 and INV-2026-004419"),
    ("tests/auth/test_sso.py::test_saml_clock_skew",
     "saml2.response.ResponseLifetimeExceed: Can't use response, too old"),
    ("tests/reports/test_vat.py::test_quarterly_totals_match_ledger",
     "AssertionError: Decimal('18211.40') != Decimal('18211.41')"),
    ("tests/search/test_indexing.py::test_reindex_is_idempotent",
     "psycopg.errors.UniqueViolation: duplicate key value violates unique constraint"
     " \"search_doc_pkey\""),
    ("tests/notifications/test_email.py::test_digest_skips_unsubscribed",
     "AssertionError: expected 0 emails to dana@example.com, sent 1"),
    ("tests/api/test_rate_limit.py::test_burst_of_100_gets_429",
     "AssertionError: assert 200 == 429"),
    ("tests/export/test_csv.py::test_semicolon_locale",
     "UnicodeEncodeError: 'ascii' codec can't encode character '\\xe9' in position 41"),
)  # fmt: skip

_MONTHS = ("January", "February", "March", "April", "May", "June", "July")


def _said(day: date) -> str:
    return f"{_MONTHS[day.month - 1]} {day.day}"


def nightly(b: Book) -> None:
    """One nightly CI run a day from 4 May to 29 June; about a third fail, each on one of a
    few tests (the same test fails on several nights, with its own log each time)."""
    rng = random.Random(4099)
    t = b.task("ci", "2026-05-03 22:00", "Keep the nightly CI green",
               goal="Triage every red nightly run the next morning",
               plan=["Triage", "Fix or quarantine", "Report in standup"])  # fmt: skip
    day = date(2026, 5, 4)
    failures: list[tuple[date, str, str]] = []
    while day <= date(2026, 6, 29):
        stamp = f"{day.isoformat()} 02:{rng.randrange(10, 50)}"
        command = f"pytest -n 4 --junitxml=reports/nightly-{day.isoformat()}.xml"
        total = 2380 + (day - date(2026, 5, 4)).days * 3
        seconds = rng.uniform(610, 720)
        if rng.random() < 0.36:
            test, message = rng.choice(FAILING_TESTS)
            out = (
                f"============ test session starts ============\ncollected {total} items\n"
                f"...\n================= FAILURES =================\n____ {test.split('::')[1]}"
                f" ____\nE   {message}\n=========== short test summary info ===========\n"
                f"FAILED {test} - {message[:60]}\n====== 1 failed, {total - 1} passed in"
                f" {seconds:.2f}s ======"
            )
            key = f"ci.{day.isoformat()}"
            b.command(key, t, stamp, command, exit_code=1, stdout=out)
            failures.append((day, key, test))
        else:
            out = (
                f"============ test session starts ============\ncollected {total} items\n"
                f"...\n============ {total} passed in {seconds:.2f}s ============"
            )
            b.command(f"ci.{day.isoformat()}", t, stamp, command, stdout=out, labelled=False)
        day += timedelta(days=1)

    for day, key, _ in failures[::2]:
        b.ask("temporal", f"which test failed in the nightly run on {_said(day)}?", key)
    for day, key, _ in failures[1::4]:
        morning = (day).isoformat() + " 08:30"
        b.ask("temporal", "what broke in last night's CI run?", key, asked_at=morning)
    for day, key, _ in failures[3::5]:
        later = (day + timedelta(days=1)).isoformat() + " 09:00"
        b.ask("temporal", "why was the nightly red yesterday?", key, asked_at=later)
    weeks: dict[int, list[str]] = {}
    for day, key, _ in failures:
        weeks.setdefault(day.isocalendar().week, []).append(key)
    for week, keys in sorted(weeks.items()):
        if len(keys) >= 2:
            monday = date.fromisocalendar(2026, week, 1)
            b.ask("multi-fact", f"which nightly runs failed in the week of {_said(monday)}?",
                  *keys)  # fmt: skip
    by_test: dict[str, list[str]] = {}
    for _, key, test in failures:
        by_test.setdefault(test, []).append(key)
    for test, keys in sorted(by_test.items()):
        name = test.split("::")[1]
        if len(keys) >= 2:
            b.ask("multi-fact", f"every night {name} failed", *keys)
        b.ask("identifier", test, *keys)


# service, first error (code, symptom, fix), second error (code, symptom, fix)
SERVICES = (
    ("payouts", ("ERR_PAYOUT_CURRENCY_MISMATCH", "payouts in SEK were sent as EUR",
                 "normalise the currency from the beneficiary account, not the invoice"),
                ("ERR_PAYOUT_IBAN_CHECKSUM", "Irish IBANs rejected by the checksum",
                 "strip spaces before the mod-97 check")),
    ("ingest", ("ERR_INGEST_SCHEMA_DRIFT", "the partner feed added a column and the loader"
                " stopped", "allow unknown columns and log them"),
               ("ERR_INGEST_DUPLICATE_BATCH", "the same batch was loaded twice after a retry",
                "make batch ids idempotency keys")),
    ("search", ("ERR_SEARCH_SHARD_TIMEOUT", "queries over 2 years timed out on shard 3",
                "split the index by year and query in parallel"),
               ("ERR_SEARCH_ANALYZER_MISSING", "the Portuguese analyzer was missing after"
                " upgrade", "install the analysis-icu plugin in the image")),
    ("mailer", ("ERR_MAILER_SPF_FAIL", "digests landed in spam at Outlook",
                "add the new SendGrid range to the SPF record"),
               ("ERR_MAILER_TEMPLATE_VAR", "welcome emails showed {{ first_name }} raw",
                "pass first_name in the template context")),
    ("gateway", ("ERR_GATEWAY_502_UPSTREAM", "502s from the gateway during deploys",
                 "drain connections for 30 seconds before stopping pods"),
                ("ERR_GATEWAY_CORS_ORIGIN", "the mobile app was blocked by CORS",
                 "add capacitor://localhost to the allowed origins")),
    ("scheduler", ("ERR_SCHED_DST_SKIP", "jobs at 02:30 were skipped on the DST change",
                   "schedule in UTC and convert for display"),
                  ("ERR_SCHED_LOCK_STALE", "a crashed node held the job lock for hours",
                   "give the lock a 5 minute TTL with heartbeats")),
    ("exports", ("ERR_EXPORT_XLSX_MEMORY", "the yearly export ran out of memory",
                 "stream rows with openpyxl write-only mode"),
                ("ERR_EXPORT_TZ_OFFSET", "exported times were an hour off for Lisbon",
                 "format with the tenant's zoneinfo, not the server's")),
    ("identity", ("ERR_IDP_METADATA_EXPIRED", "SSO logins failed when the IdP metadata"
                  " expired", "refresh metadata daily from the IdP URL"),
                 ("ERR_IDP_EMAIL_CASE", "users with capitalised emails got duplicate accounts",
                  "compare emails case-insensitively and merge the duplicates")),
    ("billing-api", ("ERR_BILLING_PRORATION_NEGATIVE", "downgrades produced negative"
                     " prorations", "clamp proration credits at the invoice total"),
                    ("ERR_BILLING_VAT_REVERSE", "EU B2B invoices charged VAT",
                     "apply reverse charge when a valid VAT id is on file")),
    ("uploads", ("ERR_UPLOAD_MULTIPART_ETAG", "large uploads failed on completion",
                 "send part ETags in ascending part order"),
                ("ERR_UPLOAD_HEIC_PREVIEW", "iPhone photos had no preview",
                 "convert HEIC to JPEG with libheif in the thumbnail worker")),
    ("webhooks", ("ERR_WEBHOOK_SIGNATURE", "partners rejected our webhook signatures",
                  "sign the raw body bytes, not the re-serialised JSON"),
                 ("ERR_WEBHOOK_RETRY_STORM", "a partner outage caused a retry storm",
                  "exponential backoff with jitter, capped at one hour")),
    ("analytics", ("ERR_ANALYTICS_LATE_EVENTS", "late mobile events were dropped from daily"
                   " counts", "keep the daily window open for 72 hours"),
                  ("ERR_ANALYTICS_BOT_TRAFFIC", "signups doubled from bot traffic",
                   "filter by the bot score from the CDN header")),
)  # fmt: skip


def oncall(b: Book) -> None:
    """The on-call log: two resolved errors per service, each with the failing command that
    showed it; the questions name a code, a symptom or a service."""
    rng = random.Random(7717)
    t = b.task("oncall", "2026-05-02 08:00", "On-call rotation May-June",
               goal="Every incident has an error entry with its fix",
               plan=["Triage alerts", "Fix", "Write up"])  # fmt: skip
    start = date(2026, 5, 3)
    for n, (service, *errors) in enumerate(SERVICES):
        keys = []
        for m, (code, symptom, fix) in enumerate(errors):
            day = start + timedelta(days=2 * n + 25 * m + rng.randrange(0, 2))
            key = f"oncall.{service}.{m + 1}"
            log = (
                f"{day.isoformat()}T0{rng.randrange(1, 9)}:{rng.randrange(10, 59)}:07Z ERROR"
                f" {service}-{rng.randrange(1, 9)} {code}: {symptom}\n"
                f"  request_id=req_{rng.getrandbits(40):010x} tenant=t_{rng.randrange(100, 999)}"
            )
            b.command(
                f"{key}.log",
                t,
                f"{day.isoformat()} 09:10",
                f"kubectl logs deploy/{service} --since=2h | grep ERROR",
                stdout=log,
            )
            b.entry(key, t, f"{day.isoformat()} 11:30", "error", f"{service}: {symptom}",
                    detail=f"{code} in the {service} service.", resolution=f"Fix: {fix}.",
                    tags=(service,))  # fmt: skip
            keys.append(key)
            # A look-alike code of the same service on another day, answering nothing.
            near = code.rsplit("_", 1)[0] + "_" + rng.choice(("TIMEOUT", "RETRY", "INVALID"))
            other = day + timedelta(days=rng.randrange(3, 9))
            b.command(f"{key}.near", t, f"{other.isoformat()} 09:40",
                      f"kubectl logs deploy/{service} --since=2h | grep ERROR",
                      stdout=f"{other.isoformat()}T04:12:55Z ERROR {service}-2 {near}: retried",
                      labelled=False)  # fmt: skip
            if m == 0 or n % 2:
                asked = code if (n + m) % 2 else f"have we seen {code} before, and what fixed it?"
                b.ask("identifier", asked, key, f"{key}.log")
            if (n + m) % 3 == 0:
                b.ask("single-fact", f"how did we fix the {service} issue where {symptom}?", key)
        b.ask("multi-fact", f"what errors has the {service} service had, and their fixes?", *keys)
