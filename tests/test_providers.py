"""The real HTTP clients against servers the tests start on 127.0.0.1: an OpenAI-compatible
one (happy path, malformed output, timeout, 429 then success, refused key, unknown model,
caps reached) and an Anthropic-shaped one."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.errors import ModelAuthError, ModelError, ModelNotFoundError, ModelUnavailableError
from clew.providers import Message, ModelSettings, connect
from tests.conftest import FakeClock
from tests.test_utility import finished_step

Reply = tuple[int, dict[str, str], bytes]


class FakeAPI:
    """A local HTTP server answering from a script of replies (or a function)."""

    def __init__(self) -> None:
        self.replies: list[Reply | Callable[[dict[str, Any]], Reply]] = []
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                api.requests.append((self.path, headers, body))
                reply = api.replies.pop(0) if api.replies else (500, {}, b"{}")
                if callable(reply):
                    reply = reply(body)
                status, headers, payload = reply
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    server = FakeAPI()
    yield server
    server.close()


def chat(text: str, prompt: int = 30, completion: int = 7) -> Reply:
    body = {
        "model": "tiny-local",
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def settings(api: FakeAPI, **overrides: Any) -> ModelSettings:
    base = {
        "provider": "openai",
        "model": "tiny-local",
        "base_url": api.url + "/v1",
        "api_key": "sk-test",
        "timeout": 2.0,
        "retries": 2,
    }
    return ModelSettings(**{**base, **overrides})


def test_happy_path(api: FakeAPI) -> None:
    api.replies = [chat("hello")]
    answer = connect(settings(api)).complete([Message("system", "be brief"), Message("user", "hi")])
    assert answer == ("hello", 30, 7, "tiny-local")
    path, headers, body = api.requests[0]
    assert path == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-test"
    assert body["model"] == "tiny-local" and body["messages"][1] == {
        "role": "user",
        "content": "hi",
    }


def test_429_then_success_is_retried(api: FakeAPI) -> None:
    busy = (429, {"Retry-After": "0"}, b'{"error": {"message": "slow down"}}')
    api.replies = [busy, (503, {}, b"overloaded"), chat("finally")]
    assert connect(settings(api)).complete([Message("user", "hi")]).text == "finally"
    assert len(api.requests) == 3


def test_a_server_that_never_answers_in_time(api: FakeAPI) -> None:
    def slow(body: dict[str, Any]) -> Reply:
        time.sleep(0.6)
        return chat("too late")

    api.replies = [slow, slow]
    started = time.monotonic()
    with pytest.raises(ModelUnavailableError, match="did not answer after 2 tries"):
        connect(settings(api, timeout=0.2, retries=1)).complete([Message("user", "hi")])
    assert time.monotonic() - started < 3


def test_a_refused_key_and_an_unknown_model_are_clear(api: FakeAPI) -> None:
    api.replies = [(401, {}, b'{"error": {"message": "Incorrect API key provided"}}')]
    with pytest.raises(ModelAuthError, match=r"refused the key .*Incorrect API key"):
        connect(settings(api)).complete([Message("user", "hi")])
    api.replies = [(404, {}, b'{"error": {"message": "The model `nope` does not exist"}}')]
    with pytest.raises(ModelNotFoundError, match="does not know model 'nope'"):
        connect(settings(api, model="nope")).complete([Message("user", "hi")])
    assert len(api.requests) == 2  # neither is retried


def test_answers_that_are_not_what_was_asked(api: FakeAPI) -> None:
    api.replies = [(200, {}, b"<html>proxy error</html>"), (200, {}, b'{"choices": []}')]
    with pytest.raises(ModelError, match="not JSON"):
        connect(settings(api)).complete([Message("user", "hi")])
    with pytest.raises(ModelError, match="without choices"):
        connect(settings(api)).complete([Message("user", "hi")])


def test_nobody_listening_is_unavailable() -> None:
    gone = ModelSettings("openai", "m", "http://127.0.0.1:9/v1", None, 0.5, 1)
    with pytest.raises(ModelUnavailableError, match="2 tries"):
        connect(gone).complete([Message("user", "hi")])


def test_anthropic_messages_api(api: FakeAPI) -> None:
    body = {
        "model": "claude-x",
        "content": [{"type": "text", "text": "hi there"}],
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }
    api.replies = [(200, {}, json.dumps(body).encode())]
    provider = connect(ModelSettings("anthropic", "claude-x", api.url, "ak-test"))
    answer = provider.complete([Message("system", "be brief"), Message("user", "hi")])
    assert answer == ("hi there", 12, 3, "claude-x")
    path, headers, sent = api.requests[0]
    assert path == "/v1/messages" and headers["x-api-key"] == "ak-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert sent["system"] == "be brief" and sent["messages"] == [{"role": "user", "content": "hi"}]


# -- through clew, configured the way a user configures it ----------------------------------


@pytest.fixture
def configured(
    tmp_path: Path, api: FakeAPI, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> Iterator[clew.Memory]:
    # The user's own file: a store's own may not say where the memory is sent.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home-config"))
    (tmp_path / "home-config" / "clew").mkdir(parents=True)
    (tmp_path / "home-config" / "clew" / "config.toml").write_text(
        f'[model]\nprovider = "openai"\nbase_url = "{api.url}/v1"\nmodel = "tiny-local"\n'
        'api_key_env = "TEST_MODEL_KEY"\ntimeout = 2\nretries = 1\n\n[limits]\ncalls_per_day = 3\n'
    )
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-from-env")
    with clew.open(tmp_path / "clew.db", clock=clock) as mem:
        yield mem


def test_extraction_through_a_real_client(
    configured: clew.Memory, api: FakeAPI, clock: FakeClock
) -> None:
    answer = '[{"type": "discovery", "summary": "main.c needs foo declared", "tags": "c"}]'
    api.replies = [chat(answer, 900, 40)]
    task_id = finished_step(configured, clock)
    (done,) = configured.run_jobs()
    assert done.result["source"] == "model"
    assert api.requests[0][1]["authorization"] == "Bearer sk-from-env"
    (entry,) = configured.list_entries(task_id)
    assert entry.summary == "main.c needs foo declared"
    usage = configured.usage()
    assert (usage.calls, usage.tokens) == (1, 940)


def test_malformed_output_through_a_real_client(
    configured: clew.Memory, api: FakeAPI, clock: FakeClock
) -> None:
    api.replies = [chat("Sure! The build failed because of foo.")]
    task_id = finished_step(configured, clock)
    (done,) = configured.run_jobs()
    assert done.result["source"] == "rules" and "refused" in done.result["note"]
    rejected = [e for e in configured.journal() if e.type == "model.output_rejected"]
    assert rejected[0].data["raw"] == "Sure! The build failed because of foo."
    assert len(configured.list_entries(task_id)) == 4  # the rules' entries only


def test_caps_reached_through_a_real_client(
    configured: clew.Memory, api: FakeAPI, clock: FakeClock
) -> None:
    api.replies = [chat("one"), chat("two"), chat("three"), chat("four")]
    task = configured.create_task("T", ["a"])
    answers = [configured.ask(task.id, "where am I?") for _ in range(4)]
    assert [a.source for a in answers] == ["model", "model", "model", "rules"]
    assert "calls per day cap (3) is reached" in (answers[3].note or "")
    assert len(api.requests) == 3
    clock.advance(86400)  # a new day
    assert configured.ask(task.id, "where am I?").text == "four"


def test_a_bad_model_setting_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_MODEL", "m")
    monkeypatch.setenv("CLEW_MODEL_PROVIDER", "skynet")
    with pytest.raises(clew.ValidationError, match="provider 'skynet' is not one of"):
        clew.open(tmp_path / "x.db")
    monkeypatch.setenv("CLEW_MODEL_PROVIDER", "openai")
    monkeypatch.setenv("CLEW_MODEL_TIMEOUT", "-1")
    with pytest.raises(clew.ValidationError, match="timeout must be positive"):
        clew.open(tmp_path / "x.db")
