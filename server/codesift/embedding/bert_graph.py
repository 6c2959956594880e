"""A BERT encoder rebuilt with onnxruntime's fused transformer operators.

The shipped all-MiniLM-L6-v2 was exported operator by operator: each layer's
attention alone is ~40 nodes (reshapes, transposes, slices, the mask arithmetic),
315 nodes in all once constants are folded. For one short query onnxruntime spends
about as long dispatching those small nodes as multiplying matrices, and its own
transformer optimiser does not recognise this export's attention.

`fuse_bert` reads the weights out of the constant-folded export and writes the same
network with onnxruntime's contrib operators (com.microsoft domain):

    EmbedLayerNormalization   word + position + token-type embeddings, LayerNorm
    per layer:
      Attention               Q, K and V in one product, the softmax, the heads
      MatMul                  attention output projection
      SkipLayerNormalization  + bias, + residual, LayerNorm
      MatMul, BiasGelu        feed-forward in (exact erf GELU)
      MatMul                  feed-forward out (`output_<layer>`)
      SkipLayerNormalization

46 nodes for MiniLM-L6. Its float32 output matches the export's to ~1e-5
(`max_difference`, checked by the caller before the graph is used), and dynamic
quantisation turns Attention into QAttention. The network's shape comes from the
model folder's config.json; anything that is not a post-LayerNorm BERT with GELU,
or whose weights are not where a BERT export puts them, raises UnsupportedGraph.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import onnx

__all__ = [
    "BertShape",
    "UnsupportedGraph",
    "bert_shape",
    "fuse_bert",
    "max_difference",
]

MS_DOMAIN = "com.microsoft"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class UnsupportedGraph(Exception):
    """The model is not a BERT encoder this module can rebuild."""


@dataclass(frozen=True, slots=True)
class BertShape:
    layers: int
    hidden: int
    heads: int
    intermediate: int
    epsilon: float


def bert_shape(config_path: Path) -> BertShape:
    """The network's shape from a Hugging Face config.json."""
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
        shape = BertShape(
            layers=int(config["num_hidden_layers"]),
            hidden=int(config["hidden_size"]),
            heads=int(config["num_attention_heads"]),
            intermediate=int(config["intermediate_size"]),
            epsilon=float(config.get("layer_norm_eps", 1e-12)),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UnsupportedGraph(f"cannot read {config_path.name}: {exc}") from exc
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise UnsupportedGraph(
            f"not a BERT encoder with GELU: model_type {config.get('model_type')!r},"
            f" hidden_act {config.get('hidden_act')!r}"
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise UnsupportedGraph("position embeddings are not absolute")
    if shape.hidden % shape.heads:
        raise UnsupportedGraph("hidden size is not a multiple of the head count")
    return shape


class _Weights:
    """The initializers of a folded export, found by their parameter names."""

    def __init__(self, model: onnx.ModelProto) -> None:
        from onnx import numpy_helper

        self._arrays: dict[str, npt.NDArray[Any]] = {
            init.name: numpy_helper.to_array(init) for init in model.graph.initializer
        }
        self._nodes = list(model.graph.node)
        self._producer = {out: node for node in self._nodes for out in node.output}
        suffix = "embeddings.word_embeddings.weight"
        found = [name for name in self._arrays if name.endswith(suffix)]
        if len(found) != 1:
            raise UnsupportedGraph("no single word embedding table")
        self.prefix = found[0][: -len(suffix)]

    def param(self, name: str, shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
        array = self._arrays.get(self.prefix + name)
        if array is None:
            raise UnsupportedGraph(f"no parameter {name}")
        return self._checked(name, array, shape)

    def table(self, name: str, width: int) -> npt.NDArray[np.float32]:
        """An embedding table: `name.weight`, one row of `width` per id."""
        array = self._arrays.get(self.prefix + name + ".weight")
        if array is None:
            raise UnsupportedGraph(f"no parameter {name}.weight")
        rows = array.shape[0] if array.ndim == 2 else -1
        return self._checked(name, array, (rows, width))

    def linear(
        self, name: str, shape: tuple[int, int]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """(weight as [in, out], bias) of the `name` layer: the MatMul whose output
        the Add of `name.bias` takes."""
        bias_name = self.prefix + name + ".bias"
        bias = self.param(name + ".bias", (shape[1],))
        for node in self._nodes:
            if node.op_type != "Add" or bias_name not in node.input:
                continue
            others = [i for i in node.input if i != bias_name]
            product = self._producer.get(others[0]) if len(others) == 1 else None
            if product is None or product.op_type != "MatMul" or len(product.input) != 2:
                break
            weight = self._arrays.get(product.input[1])
            if weight is None:
                break
            return self._checked(name + " weight", weight, shape), bias
        raise UnsupportedGraph(f"no MatMul + Add for {name}")

    @staticmethod
    def _checked(
        name: str, array: npt.NDArray[Any], shape: tuple[int, ...]
    ) -> npt.NDArray[np.float32]:
        if tuple(array.shape) != shape or array.dtype != np.float32:
            raise UnsupportedGraph(f"{name}: {array.dtype} {array.shape}, expected {shape}")
        return np.ascontiguousarray(array)


class _Builder:
    """The nodes and initializers of the fused graph, as they are added."""

    def __init__(self, weights: _Weights, shape: BertShape) -> None:
        self.weights = weights
        self.shape = shape
        self.nodes: list[onnx.NodeProto] = []
        self.tensors: list[onnx.TensorProto] = []

    def const(self, name: str, array: npt.NDArray[np.float32]) -> str:
        from onnx import numpy_helper

        self.tensors.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        from onnx import helper

        domain = "" if op == "MatMul" else MS_DOMAIN
        self.nodes.append(
            helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes)
        )
        return output

    def matmul(self, name: str, x: str, weight: npt.NDArray[np.float32]) -> str:
        return self.node("MatMul", [x, self.const(f"{name}_weight", weight)], name)

    def skip_norm(self, x: str, skip: str, norm: str, bias: str, output: str) -> str:
        """LayerNorm(x + skip + bias) with the `norm` LayerNorm's parameters."""
        hidden = (self.shape.hidden,)
        return self.node(
            "SkipLayerNormalization",
            [
                x,
                skip,
                self.const(f"{output}_gamma", self.weights.param(norm + ".weight", hidden)),
                self.const(f"{output}_beta", self.weights.param(norm + ".bias", hidden)),
                bias,
            ],
            output,
            epsilon=self.shape.epsilon,
        )

    def embeddings(self) -> str:
        """Word + position + token type embeddings and their LayerNorm; also the
        `mask_index` (tokens per sequence) the Attention nodes read."""
        from onnx import TensorProto, helper

        for name in INPUTS:
            self.nodes.append(
                helper.make_node("Cast", [name], [f"{name}_int32"], to=TensorProto.INT32)
            )
        w, hidden = self.weights, self.shape.hidden
        tables = [
            self.const(name, w.table(f"embeddings.{name}", hidden))
            for name in ("word_embeddings", "position_embeddings", "token_type_embeddings")
        ]
        self.nodes.append(
            helper.make_node(
                "EmbedLayerNormalization",
                [
                    "input_ids_int32",
                    "token_type_ids_int32",
                    *tables,
                    self.const(
                        "embeddings_gamma", w.param("embeddings.LayerNorm.weight", (hidden,))
                    ),
                    self.const("embeddings_beta", w.param("embeddings.LayerNorm.bias", (hidden,))),
                    "attention_mask_int32",
                ],
                ["hidden_0", "mask_index"],
                domain=MS_DOMAIN,
                epsilon=self.shape.epsilon,
                name="embeddings",
            )
        )
        return "hidden_0"

    def layer(self, layer: int, x: str, output: str) -> str:
        """One encoder layer from `x` to `output`; returns its feed-forward output
        MatMul's name."""
        w, hidden, inner = self.weights, self.shape.hidden, self.shape.intermediate
        p = f"encoder.layer.{layer}."
        square = (hidden, hidden)
        wq, bq = w.linear(p + "attention.self.query", square)
        wk, bk = w.linear(p + "attention.self.key", square)
        wv, bv = w.linear(p + "attention.self.value", square)
        wo, bo = w.linear(p + "attention.output.dense", square)
        wi, bi = w.linear(p + "intermediate.dense", (hidden, inner))
        wd, bd = w.linear(p + "output.dense", (inner, hidden))
        attention = self.node(
            "Attention",
            [
                x,
                self.const(f"qkv_weight_{layer}", np.concatenate([wq, wk, wv], axis=1)),
                self.const(f"qkv_bias_{layer}", np.concatenate([bq, bk, bv])),
                "mask_index",
            ],
            f"attention_{layer}",
            num_heads=self.shape.heads,
        )
        attended = self.skip_norm(
            self.matmul(f"attention_output_{layer}", attention, wo),
            x,
            p + "attention.output.LayerNorm",
            self.const(f"attention_output_bias_{layer}", bo),
            f"attended_{layer}",
        )
        gelu = self.node(
            "BiasGelu",
            [
                self.matmul(f"intermediate_{layer}", attended, wi),
                self.const(f"intermediate_bias_{layer}", bi),
            ],
            f"gelu_{layer}",
        )
        down = self.matmul(f"output_{layer}", gelu, wd)
        self.skip_norm(
            down,
            attended,
            p + "output.LayerNorm",
            self.const(f"output_bias_{layer}", bd),
            output,
        )
        return down


def fuse_bert(folded: Path, config_path: Path, target: Path) -> list[str]:
    """Write the fused encoder of `folded` (a BERT export with constants folded) to
    `target`; return the names of the feed-forward output MatMuls, first layer
    first. Raises UnsupportedGraph."""
    import onnx
    from onnx import TensorProto, helper

    shape = bert_shape(config_path)
    source = onnx.load(str(folded))
    inputs = [i.name for i in source.graph.input]
    if sorted(inputs) != sorted(INPUTS) or len(source.graph.output) != 1:
        raise UnsupportedGraph(f"inputs {inputs}, outputs {len(source.graph.output)}")
    output_name = source.graph.output[0].name
    builder = _Builder(_Weights(source), shape)
    x = builder.embeddings()
    down: list[str] = []
    for layer in range(shape.layers):
        out = output_name if layer == shape.layers - 1 else f"hidden_{layer + 1}"
        down.append(builder.layer(layer, x, out))
        x = out
    dims: list[str | int] = ["batch", "sequence"]
    graph = helper.make_graph(
        builder.nodes,
        "bert_fused",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in INPUTS],
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, [*dims, shape.hidden])],
        builder.tensors,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS_DOMAIN, 1)]
    )
    model.ir_version = 8
    onnx.save(model, str(target))
    return down


def max_difference(first: Path, second: Path, tokens: int = 24) -> float:
    """Largest absolute difference between the outputs of two float32 encoders over
    a probe input (token ids spread over the vocabulary, two sequences, the second
    padded at the end)."""
    import onnxruntime as ort

    sessions = [
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        for path in (first, second)
    ]
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 20000, size=(2, tokens), dtype=np.int64)
    ids[:, 0], ids[0, -1] = 101, 102
    mask = np.ones_like(ids)
    mask[1, tokens // 2 :] = 0
    ids[1, tokens // 2 - 1] = 102
    ids[1, tokens // 2 :] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    a, b = (np.asarray(s.run(None, feeds)[0]) for s in sessions)
    # Padding positions are never pooled: compare the real tokens only.
    real = mask.astype(bool)
    return float(np.abs(a[real] - b[real]).max())
