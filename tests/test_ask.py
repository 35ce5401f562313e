"""`ask` without a model, measured on twenty questions a person would type about a realistic
recorded task. Each question's answer is in the records; the expected text must be in the
answer `ask` gives (which shows at most its best three records, or the brief's lines)."""

from __future__ import annotations

import pytest

import clew
from clew.state.summaries import intent, search_words

# The questions were written as a user would ask them, before the rules that answer them,
# and are not tuned to the implementation: some of them use words the records do not.
QUESTIONS: tuple[tuple[str, str], ...] = (
    ("which container registry did we pick?", "ghcr.io"),
    ("why did we move away from alpine?", "musl"),
    ("what base image are we using?", "python:3.11-slim"),
    ("how did we fix the docker push permission error?", "write:packages"),
    ("what's wrong with nginx?", "cannot load certificate"),
    ("what is the IP of the server?", "49.12.1.7"),
    ("what command did I use to start the container?", "docker run"),
    ("are we allowed to use an ORM?", "raw SQL"),
    ("can I deploy on a Friday?", "Fridays"),
    ("where was I?", "Pull image and run container"),
    ("what's next?", "Configure nginx and TLS"),
    ("how many gunicorn workers?", "4 workers"),
    ("which VM type did we choose?", "CX22"),
    ("what environment variables does the app need?", "DATABASE_URL"),
    ("what's the domain?", "coursefolio.dev"),
    ("did the tests pass?", "112 passed"),
    ("where is the database hosted?", "managed Postgres"),
    ("what email should certbot use?", "ops@coursefolio.dev"),
    ("how big is the image?", "212 MB"),
    ("any open questions?", "subdomain"),
)
# How many of them the rules answer today; the test fails if that count drops.
ANSWERED = 17


def record_deploy(mem: clew.Memory) -> str:
    """Record a deployment the way an agent would: a plan, progress, commands with output,
    decisions, errors and fixes, constraints, findings, a question, a conversation."""
    task = mem.create_task(
        "Deploy coursefolio",
        [
            "Write Dockerfile",
            "Build and push image",
            "Provision VM on Hetzner",
            "Pull image and run container",
            "Configure nginx and TLS",
        ],
        goal="coursefolio served over HTTPS from its own VM",
    )
    t = task.id
    mem.add_constraint(t, "No ORM: use raw SQL with psycopg")
    mem.add_constraint(t, "Do not deploy to production on Fridays")
    mem.update_task(t, step=1, step_status="active")
    mem.add_error(
        t,
        "psycopg2 build failed on alpine: pg_config executable not found",
        command="docker build -t coursefolio .",
        resolution="switched the base image to python:3.11-slim",
    )
    mem.add_decision(
        t,
        "Base image python:3.11-slim rather than alpine",
        detail="alpine's musl breaks the psycopg wheels and builds take 6 minutes",
    )
    mem.record_action(
        t,
        command="docker build -t ghcr.io/acme/coursefolio:1.4.2 .",
        exit_code=0,
        stdout="Step 12/12 : CMD gunicorn app:app\nSuccessfully built 9f3c2a1b\n",
        step=1,
    )
    mem.update_task(t, message="Step 1 done: Dockerfile builds in 48s, image is 212 MB")
    mem.update_task(t, step=1, step_status="completed")
    mem.update_task(t, step=2, step_status="active")
    mem.add_decision(
        t,
        "Use ghcr.io instead of Docker Hub for the images",
        detail="Docker Hub rate limits pulls from the VM to 100 per 6 hours",
    )
    mem.record_action(
        t,
        command="docker push ghcr.io/acme/coursefolio:1.4.2",
        exit_code=1,
        stderr="denied: permission_denied: write_package\n",
        step=2,
    )
    error = mem.add_error(t, "docker push denied: permission_denied: write_package", step=2)
    mem.resolve(error.id, "created a token with write:packages scope and ran docker login ghcr.io")
    mem.record_action(
        t,
        command="docker push ghcr.io/acme/coursefolio:1.4.2",
        exit_code=0,
        stdout="1.4.2: digest: sha256:4be1c0d2 size: 2417\n",
        step=2,
    )
    mem.update_task(t, message="Pushed ghcr.io/acme/coursefolio:1.4.2 after fixing the token")
    mem.record_action(t, command="pytest -q", exit_code=0, stdout="112 passed in 3.2s\n", step=2)
    mem.update_task(t, step=2, step_status="completed")
    mem.update_task(t, step=3, step_status="active")
    mem.add_decision(
        t, "Hetzner CX22 in Falkenstein for the VM", detail="2 vCPU, 4 GB RAM, 4.5 EUR"
    )
    mem.add_finding(t, "The VM is at 49.12.1.7; ports 80 and 443 are open in the Hetzner firewall")
    mem.update_task(t, message="The domain is coursefolio.dev, DNS is at Cloudflare", role="user")
    mem.update_task(t, step=3, step_status="completed")
    mem.update_task(t, step=4, step_status="active")
    mem.add_finding(t, "coursefolio reads DATABASE_URL and SECRET_KEY from the environment")
    mem.add_decision(t, "Run the app with gunicorn, 4 workers")
    mem.record_action(
        t,
        command="ssh root@49.12.1.7 'docker run -d -p 8000:8000 --env-file /srv/coursefolio.env"
        " ghcr.io/acme/coursefolio:1.4.2'",
        exit_code=0,
        stdout="e41f0c9d2b7a\n",
        step=4,
    )
    mem.update_task(t, message="Container is up on port 8000; health check /healthz returns 200")
    mem.add_decision(t, "Terminate TLS in nginx with certbot certificates")
    mem.record_action(
        t,
        command="sudo nginx -t",
        exit_code=1,
        step=4,
        stderr="nginx: [emerg] cannot load certificate"
        ' "/etc/letsencrypt/live/coursefolio.dev/fullchain.pem"\n',
    )
    certificate = "/etc/letsencrypt/live/coursefolio.dev/fullchain.pem"
    mem.add_error(
        t, f"nginx: [emerg] cannot load certificate {certificate}", command="sudo nginx -t"
    )
    mem.add_question(t, "Should staging use a subdomain of the same domain?")
    session = mem.start_session(workspace="/srv/coursefolio", task_id=t)
    for role, content in (
        ("user", "Keep the database on the managed Postgres at Hetzner, not in a container."),
        ("assistant", "Understood: DATABASE_URL will point to the managed Postgres."),
        ("user", "The admin email for certbot is ops@coursefolio.dev"),
        ("assistant", "Noted; certbot will register with ops@coursefolio.dev."),
    ):
        mem.append_turn(session.id, {"role": role, "content": content})
    return t


@pytest.fixture
def deploy(mem: clew.Memory) -> tuple[clew.Memory, str]:
    return mem, record_deploy(mem)


def test_twenty_questions_without_a_model(deploy: tuple[clew.Memory, str]) -> None:
    mem, task_id = deploy
    missed = []
    for question, expected in QUESTIONS:
        answer = mem.ask(task_id, question)
        assert answer.note == "no model is configured"
        if expected.casefold() not in answer.text.casefold():
            missed.append((question, answer.text))
    answered = len(QUESTIONS) - len(missed)
    assert answered >= ANSWERED, f"{answered}/{len(QUESTIONS)} answered; missed: {missed}"


def test_a_decision_question_gets_decisions_ranked_by_search(
    deploy: tuple[clew.Memory, str],
) -> None:
    mem, task_id = deploy
    answer = mem.ask(task_id, "what did we decide about Docker Hub?")
    lines = answer.text.splitlines()
    assert lines[0] == "Decisions matching 'Docker Hub', best first:"
    assert "[decision]" in lines[1] and "ghcr.io" in lines[1]
    # Commands and messages that say "docker" are not decisions; and "what", "did" and "we"
    # are not what the question is about, so a record holding only them never answers it.
    assert all("[decision]" in line for line in lines[1:])


@pytest.mark.parametrize(
    ("question", "kind", "words"),
    [
        ("which registry did we decide on?", "decision", "registry"),
        ("how did we fix the push error?", "error", "push"),
        ("what command did I run to build?", "command", "build"),
        ("are we allowed to use an ORM?", "constraint", "ORM"),
        ("any open questions?", "question", ""),
        ("where was I?", "brief", ""),
        ("how big is the image?", "general", "big image"),
        # The kind word said first is what is asked for; a later one is what it is about.
        ("what did we choose for error tracking?", "decision", "tracking"),
        ("which errors did we decide to ignore?", "error", "ignore"),
    ],
)
def test_questions_are_classified_and_reduced_to_their_words(
    question: str, kind: str, words: str
) -> None:
    assert intent(question).name == kind
    assert search_words(question) == words


def test_a_question_about_records_there_are_none_of_says_so(mem: clew.Memory) -> None:
    task = mem.create_task("Empty", ["one"])
    assert mem.ask(task.id, "what did we decide?").text == "No decisions are recorded."
    assert mem.ask(task.id, "which ORM rules apply?").text == (
        "No constraints and rules are recorded that match 'ORM apply'."
    )
    # A question about nothing in particular, with nothing found, gets the brief.
    assert mem.ask(task.id, "kestrel?").text.startswith("Task 'Empty'")
