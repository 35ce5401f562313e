# ruff: noqa: E501  (the cases are data: one case a line reads better than wrapped)
"""Writes data/search.jsonl, the search judgement set (search.md says how it was made).

    python benchmarks/judgement/search_cases.py

Each topic is a choice an agent made and then changed, with the words an agent uses for it;
each kind of case is built from every topic. Topics from HELD_OUT on are the held-out part.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (area noun, old choice, new choice with why, how an agent asks which was picked,
#  an identifier met in that area, a task name, its goal, a step, its issue, an answer,
#  a pattern, a guardrail)
TOPICS = [
    (
        "registry",
        "Push to Docker Hub",
        "Push to ghcr.io instead of Docker Hub: Docker Hub rate-limits pulls",
        "which registry did we pick?",
        "v2.19.2",
    ),
    (
        "database",
        "Use MySQL 8 for the orders service",
        "Use PostgreSQL 16 instead of MySQL: we need jsonb and partial indexes",
        "which database did we choose for orders?",
        "orders_p004",
    ),
    (
        "queue",
        "Use RabbitMQ for background jobs",
        "Switch background jobs to Redis streams: one less service to run",
        "what did we decide for the job queue?",
        "E1234",
    ),
    (
        "base image",
        "Build on python:3.11-alpine",
        "Build on python:3.11-slim instead of alpine: musl breaks the wheels",
        "which base image did we settle on?",
        "f2000",
    ),
    (
        "ORM",
        "Use SQLAlchemy ORM models",
        "Write raw SQL with psycopg instead of the ORM: the queries are reporting joins",
        "did we go with the ORM?",
        "src/db/reports.py",
    ),
    (
        "CI",
        "Run CI on Jenkins",
        "Move CI to GitHub Actions: Jenkins agents keep dying",
        "which CI did we pick?",
        "ci-7731",
    ),
    (
        "cache",
        "Cache sessions in memcached",
        "Cache sessions in Redis instead: memcached loses them on restart",
        "what did we choose for session caching?",
        "SESSION_TTL_S",
    ),
    (
        "package manager",
        "Install with npm",
        "Use pnpm instead of npm: the monorepo installs take 9 minutes",
        "which package manager did we go with?",
        "pnpm-lock.yaml",
    ),
    (
        "test runner",
        "Run the tests with unittest",
        "Run the tests with pytest -n auto: unittest has no parallel runs",
        "what test runner did we decide on?",
        "tests/test_billing.py::test_refund",
    ),
    (
        "hosting",
        "Host on Heroku",
        "Host on Fly.io instead of Heroku: the free dynos are gone",
        "where did we decide to host it?",
        "fly.toml",
    ),
    (
        "logging",
        "Log with print statements",
        "Log with structlog as JSON: the log shipper needs JSON",
        "what did we pick for logging?",
        "LOG_LEVEL",
    ),
    (
        "auth",
        "Roll our own JWT auth",
        "Use Auth0 instead of our own JWT code: rotation and MFA come with it",
        "which auth provider did we choose?",
        "AUTH0_DOMAIN",
    ),
    (
        "migrations",
        "Write migrations by hand",
        "Use alembic autogenerate for migrations, reviewed by hand",
        "how did we decide to do migrations?",
        "0042_add_refunds",
    ),
    (
        "frontend framework",
        "Build the dashboard in Angular",
        "Build the dashboard in SvelteKit instead of Angular: smaller bundles",
        "which frontend framework did we pick?",
        "dashboard-v3",
    ),
    (
        "deploy tool",
        "Deploy with fabric scripts",
        "Deploy with kamal instead of fabric: zero downtime restarts",
        "what did we decide to deploy with?",
        "deploy.yml",
    ),
    (
        "search engine",
        "Search with Elasticsearch",
        "Search with PostgreSQL full-text instead of Elasticsearch: one less cluster",
        "which search engine did we go with?",
        "tsvector",
    ),
    (
        "secrets",
        "Keep secrets in a .env file on the box",
        "Keep secrets in Vault instead of .env files: audit trail",
        "where did we decide to keep secrets?",
        "VAULT_ADDR",
    ),
    (
        "monitoring",
        "Monitor with Nagios",
        "Monitor with Prometheus and Grafana instead of Nagios",
        "what monitoring did we choose?",
        "node_exporter",
    ),
    (
        "linter",
        "Lint with flake8 and isort",
        "Lint with ruff instead of flake8 and isort: one tool, 50x faster",
        "which linter did we settle on?",
        "ruff.toml",
    ),
    (
        "formatter",
        "Format with yapf",
        "Format with black instead of yapf: no style debates",
        "what formatter did we pick?",
        "pyproject.toml",
    ),
    (
        "HTTP client",
        "Call the API with requests",
        "Call the API with httpx instead of requests: we need async",
        "which HTTP client did we choose?",
        "httpx.AsyncClient",
    ),
    (
        "task scheduler",
        "Schedule jobs with cron on the VM",
        "Schedule jobs with Celery beat instead of cron: retries and visibility",
        "what did we decide for scheduling?",
        "celerybeat-schedule",
    ),
    (
        "object storage",
        "Store uploads on the local disk",
        "Store uploads in S3 instead of the local disk: the VMs are ephemeral",
        "where did we choose to store uploads?",
        "s3://uploads-prod",
    ),
    (
        "TLS",
        "Terminate TLS in nginx with certbot",
        "Terminate TLS at Caddy instead of nginx: automatic certificates",
        "how did we decide to terminate TLS?",
        "Caddyfile",
    ),
    (
        "payment provider",
        "Take payments with PayPal",
        "Take payments with Stripe instead of PayPal: refunds by API",
        "which payment provider did we pick?",
        "pi_3NfX2",
    ),
    (
        "email",
        "Send email with our own SMTP server",
        "Send email with Postmark instead of our SMTP server: deliverability",
        "what did we choose for sending email?",
        "POSTMARK_TOKEN",
    ),
    (
        "feature flags",
        "Gate features with env vars",
        "Gate features with Unleash instead of env vars: per-user rollout",
        "which feature flag tool did we go with?",
        "flag_new_checkout",
    ),
    (
        "API style",
        "Expose a REST API",
        "Expose a GraphQL API instead of REST: the mobile app needs nested reads",
        "what API style did we decide on?",
        "schema.graphql",
    ),
    (
        "container runtime",
        "Run containers with docker compose on the VM",
        "Run containers on Kubernetes instead of compose: autoscaling",
        "what did we pick to run the containers?",
        "k8s/deploy.yaml",
    ),
    (
        "Python version",
        "Stay on Python 3.9",
        "Upgrade to Python 3.12 instead of staying on 3.9: 3.9 is end of life",
        "which python version did we choose?",
        "3.12.4",
    ),
    # held out from here: written after the rules, never run while they were tuned
    (
        "DNS",
        "Keep DNS at the registrar",
        "Move DNS to Cloudflare instead of the registrar: faster propagation",
        "where did we decide to host DNS?",
        "CF-RAY",
    ),
    (
        "backup tool",
        "Back up with pg_dump nightly",
        "Back up with pgBackRest instead of pg_dump: point-in-time recovery",
        "which backup tool did we settle on?",
        "stanza=main",
    ),
    (
        "load balancer",
        "Balance with HAProxy",
        "Balance with the cloud load balancer instead of HAProxy: managed health checks",
        "what load balancer did we pick?",
        "lb-prod-01",
    ),
    (
        "build tool",
        "Build the frontend with webpack",
        "Build the frontend with Vite instead of webpack: 10x faster rebuilds",
        "which build tool did we go with?",
        "vite.config.ts",
    ),
    (
        "error tracker",
        "Track errors in the logs only",
        "Track errors with Sentry instead of the logs: grouping and alerts",
        "what did we choose for error tracking?",
        "SENTRY_DSN",
    ),
    (
        "message format",
        "Serialize events as JSON",
        "Serialize events as protobuf instead of JSON: schema evolution",
        "which event format did we decide on?",
        "events.proto",
    ),
    (
        "mobile framework",
        "Write the app in React Native",
        "Write the app in Flutter instead of React Native: one renderer",
        "which mobile framework did we pick?",
        "pubspec.yaml",
    ),
    (
        "VM size",
        "Run on a CX11 VM",
        "Run on a CX22 VM instead of CX11: the build runs out of memory",
        "which VM type did we choose?",
        "CX22",
    ),
    (
        "branching",
        "Use git-flow branches",
        "Use trunk-based development instead of git-flow: shorter lived branches",
        "what branching model did we settle on?",
        "release/2.19",
    ),
    (
        "timezone",
        "Store times in local time",
        "Store every time in UTC instead of local time: DST bugs",
        "what did we decide about timezones?",
        "TZ=UTC",
    ),
]
HELD_OUT = 30

# The outline kinds: (kind, what is recorded, words an agent searches it by)
OUTLINE = [
    ("task", "Migrate billing to Stripe", "stripe billing migration"),
    ("goal", "zero double charges after the cutover", "double charges"),
    ("step", "Backfill the ledger partitions", "ledger backfill"),
    ("issue", "ledger_p004 lock timeout on the backfill", "lock timeout"),
    (
        "answer",
        "Invoices moved; ledger backfilled in 3 partitions, 0 double charges",
        "how many partitions backfilled",
    ),
    ("pattern", "blue-green rollout", "blue-green rollout"),
    ("guardrail", "never force-push to main", "force-push to main"),
    ("task", "Upgrade the search cluster to OpenSearch 2", "opensearch upgrade"),
    ("goal", "p95 search latency under 200 ms", "search latency"),
    ("step", "Reindex the products catalogue", "reindex products"),
    ("issue", "reindex stalls at 61% on the variants mapping", "reindex stalls"),
    ("answer", "Cluster on OpenSearch 2.11; p95 180 ms after the reindex", "p95 after reindex"),
    ("pattern", "canary deploy behind a feature flag", "canary deploy"),
    ("guardrail", "never run migrations against prod without a backup", "migrations against prod"),
    ("task", "Rotate the leaked AWS keys", "rotate aws keys"),
    ("goal", "no long-lived access keys left in CI", "long-lived access keys"),
    ("step", "Revoke the old IAM access keys", "revoke iam keys"),
    ("issue", "terraform state still references the old key ARN", "terraform state key"),
    ("answer", "Keys rotated; CI uses OIDC roles now", "ci oidc roles"),
    ("pattern", "retry with exponential backoff and jitter", "exponential backoff"),
    ("guardrail", "do not edit generated files under gen/", "generated files"),
    ("task", "Cut the Docker image size", "docker image size"),
    ("goal", "image under 200 MB", "image under 200"),
    ("step", "Split the build into a multi-stage Dockerfile", "multi-stage dockerfile"),
    ("issue", "libffi missing in the runtime stage", "libffi runtime"),
    ("answer", "Image is 148 MB with the slim base and two stages", "image size now"),
    ("pattern", "pin every base image by digest", "pin base image digest"),
    ("guardrail", "never commit .env files", "commit env files"),
    ("task", "Fix the flaky checkout tests", "flaky checkout tests"),
    ("goal", "checkout suite green 50 runs in a row", "green 50 runs"),
    ("step", "Quarantine the flaky payment tests", "quarantine flaky tests"),
    ("issue", "test_refund races the webhook worker", "test_refund race"),
    (
        "answer",
        "Flakes came from a shared Redis db; each test gets its own now",
        "cause of the flakes",
    ),
    ("pattern", "one database per test worker", "database per test worker"),
    ("guardrail", "never skip the pre-commit hooks", "skip pre-commit hooks"),
    ("task", "Move cron jobs to Celery beat", "cron jobs celery"),
    ("goal", "every scheduled job retried on failure", "scheduled job retried"),
    ("step", "Port the nightly invoice export", "nightly invoice export"),
    ("issue", "export job exceeds the 15 minute visibility timeout", "visibility timeout"),
    ("answer", "All 12 cron jobs run under beat with 3 retries each", "how many cron jobs moved"),
]


def main() -> None:
    cases = []
    for n, (noun, old, new, asked, ident) in enumerate(TOPICS):
        held = n >= HELD_OUT
        history = [{"op": "decision", "ref": "old", "text": old},
                   {"op": "decision", "ref": "new", "text": new, "supersedes": "old"}]  # fmt: skip
        noise = [{"op": "message", "text": f"Looking at the {noun} options again before the release"},
                 {"op": "step", "text": f"Review the {noun} setup"}]  # fmt: skip
        cases.append({"id": f"current-{n}-pick", "kind": "current_first", "held_out": held,
                      "records": history + noise, "question": asked, "expect": "new"})  # fmt: skip
        words = " ".join(old.split()[:3]).lower()
        cases.append({"id": f"current-{n}-words", "kind": "current_first", "held_out": held,
                      "records": history + noise, "question": f"what did we decide about {words}?",
                      "expect": "new"})  # fmt: skip
        cases.append({"id": f"label-{n}", "kind": "label", "held_out": held,
                      "records": history + noise, "question": words, "expect": "old"})  # fmt: skip
        cases.append({"id": f"identifier-{n}", "kind": "identifier", "held_out": held,
                      "records": [
                          {"op": "message", "text": f"The {noun} work is slow going; the {noun} change touches many places"},
                          {"op": "message", "text": f"Still reading about the {noun} and how it fails under load"},
                          {"op": "error", "ref": "id", "text": f"{ident} failed after the change"},
                      ],
                      "question": f"what happened with {ident} and the {noun}?", "expect": "id"})  # fmt: skip
    for n, (kind, text, words) in enumerate(OUTLINE):
        cases.append({"id": f"kind-{n}-{kind}", "kind": "kind_coverage", "held_out": n >= 28,
                      "records": [{"op": kind, "ref": "it", "text": text},
                                  {"op": "message", "text": "Picked the task up again after lunch"}],
                      "question": words, "expect": "it",
                      "search_kind": "step" if kind == "issue" else kind})  # fmt: skip
    out = HERE / "data" / "search.jsonl"
    out.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    print(f"{len(cases)} cases -> {out}")


if __name__ == "__main__":
    main()
