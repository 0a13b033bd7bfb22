"""The paper's feature-based approach (5.4): per-token activations of chosen layers, JSON lines.

`extract_features.py` runs `run` (through `bert_tf.tasks.cli`). The output matches
google-research/bert's `extract_features.py`, one JSON object per input line:

    {"linex_index": 0,
     "features": [{"token": "[CLS]", "layers": [{"index": -1, "values": [...]}, ...]},
                  ...],
     "pooled": [...]}   # only with --pooling=cls or --pooling=mean

`layers` indexes the Transformer blocks' outputs (-1 is the last block), values are
rounded to 6 decimals, and only real tokens (`[CLS]` and `[SEP]` included) are listed.

Example:
>>> encoder = BertEncoder.from_config_file("bert_config.json")
>>> extractor = FeatureExtractor(encoder, BertTokenizer("vocab.txt"), layers=[-1], max_seq_length=8)
>>> record = extractor.extract([("hello world", None)], first_index=0)[0]
>>> [feature["token"] for feature in record["features"]]
['[CLS]', 'hello', 'world', '[SEP]']
>>> len(record["features"][1]["layers"][0]["values"])  # hidden_size
16
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys

import numpy as np
import tensorflow as tf
from absl import logging
from tqdm import tqdm

from bert_tf import io_utils, text_files
from bert_tf.checkpoints import (
    load_init_checkpoint,
    resolve_bert_config,
    resolve_starting_checkpoint,
)
from bert_tf.checkpoints.checkpoint_weights import named_setting
from bert_tf.checkpoints.formats import files_of
from bert_tf.data import corpus
from bert_tf.errors import UserInputError
from bert_tf.models.bert_encoder import ENCODER_INPUTS, BertEncoder
from bert_tf.tasks.pooling import POOLINGS
from bert_tf.tokenization import BertTokenizer

_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")  # google-research/bert's `text_a ||| text_b`
_DECIMALS = 6
_SHORTEST_PAIR = 4  # [CLS] a [SEP] [SEP]: the packer's shortest row for a pair


@dataclasses.dataclass(frozen=True)
class FeatureExtractionOptions:
    """What extract_features.py's flags say, as one value (see `run`)."""

    input_file: str  # text, one `text_a` or `text_a ||| text_b` a line
    output_file: str
    vocab_file: str
    bert_config_file: str | None  # None: the config stored with init_checkpoint
    init_checkpoint: str
    max_seq_length: int
    do_lower_case: bool
    layers: str  # "-1,-2": block indexes (`parse_layers`)
    batch_size: int
    pooling: str  # one of `POOLINGS`


def parse_layers(spec: str, num_layers: int) -> list[int]:
    """`"-1,-2"` -> `[-1, -2]`, each a block index in `-num_layers..num_layers-1`.

    >>> parse_layers("-1,-2,-3,-4", 12)
    [-1, -2, -3, -4]
    """
    layers = []
    for item in spec.split(","):
        try:
            layers.append(int(item))
        except ValueError:
            raise UserInputError(f"`layers`={spec}: {item.strip()!r} is not an integer") from None
        if not -num_layers <= layers[-1] < num_layers:
            raise UserInputError(
                f"`layers`={spec}: layer {layers[-1]} is outside "
                f"{-num_layers}..{num_layers - 1} (the model has {num_layers} "
                "layers)"
            )
    return layers


def read_texts(path: str) -> list[tuple[str, str | None]]:
    """`(text_a, text_b)` per line of the UTF-8 file `path`; `text_b` is None without ` ||| `.

    Raises `UserInputError` naming `<path>:<line>` where the file is not UTF-8.
    """
    lines = text_files.read_utf8(path, UserInputError).split("\n")
    if lines[-1] == "":  # after the last newline, or an empty file
        lines.pop()
    texts = []
    for line in lines:
        line = line.strip()
        match = _PAIR.match(line)
        texts.append((match.group(1), match.group(2)) if match else (line, None))
    return texts


def check_pairs_fit(texts: list[tuple[str, str | None]], max_seq_length: int, path: str) -> None:
    """Raises ValueError naming `--max_seq_length` and `<path>:<line>` of the first pair in `texts`
    (as `read_texts` returns them) if a pair cannot fit in `max_seq_length` tokens."""
    if max_seq_length >= _SHORTEST_PAIR:
        return
    line = next(
        (line for line, (_, text_b) in enumerate(texts, start=1) if text_b is not None), None
    )
    if line is not None:
        raise UserInputError(
            f"`max_seq_length`={max_seq_length} is too short for the text pair at "
            f"{path}:{line}: [CLS] a [SEP] b [SEP] needs {_SHORTEST_PAIR} or more"
        )


class FeatureExtractor:
    """Runs a `BertEncoder` on text (pairs) and turns the chosen layers into JSON records.

    Args:
        encoder: a `BertEncoder` (weights loaded).
        tokenizer: the `BertTokenizer` of its vocab.
        layers: block indexes, as `parse_layers` returns them.
        max_seq_length: tokens per input, `[CLS]`/`[SEP]` included; longer text is cut.
        pooling: "none"; "cls", the last layer's `[CLS]` vector; or "mean", the mean over
            real tokens of the chosen layers' average.
    """

    def __init__(
        self,
        encoder: BertEncoder,
        tokenizer: BertTokenizer,
        layers: list[int],
        max_seq_length: int,
        pooling: str = "none",
    ):
        if pooling not in POOLINGS:
            raise UserInputError(f"`pooling`={pooling}: expected one of {', '.join(POOLINGS)}")
        self.encoder, self.tokenizer = encoder, tokenizer
        self.layers, self.max_seq_length, self.pooling = list(layers), max_seq_length, pooling

    def pack(self, texts: list[tuple[str, str | None]]) -> dict[str, np.ndarray]:
        """`[CLS] a [SEP]` for texts, `[CLS] a [SEP] b [SEP]` for pairs; int32 `[batch, seq]`."""
        is_pair = np.array([b is not None for _, b in texts])
        packed = {
            name: np.zeros((len(texts), self.max_seq_length), np.int32) for name in ENCODER_INPUTS
        }
        for rows in (np.flatnonzero(~is_pair), np.flatnonzero(is_pair)):
            if not len(rows):
                continue
            segments = [self.tokenizer.tokenize([texts[i][0] for i in rows])]
            if is_pair[rows[0]]:
                segments.append(self.tokenizer.tokenize([texts[i][1] for i in rows]))
            for name, value in self.tokenizer.pack_inputs(segments, self.max_seq_length).items():
                packed[name][rows] = value.numpy()
        return packed

    @tf.function(reduce_retracing=True)
    def _forward(self, inputs):
        outputs = self.encoder(inputs, training=False)
        layers = tf.stack([outputs["encoder_outputs"][i] for i in self.layers], axis=1)
        # [batch, layers, seq, hidden], [batch, hidden]
        return layers, outputs["sequence_output"][:, 0]

    def extract(self, texts: list[tuple[str, str | None]], first_index: int) -> list[dict]:
        """One JSON-ready record per text; `linex_index` counts from `first_index`."""
        inputs = self.pack(texts)
        layers, cls = (value.numpy().astype(np.float64) for value in self._forward(inputs))
        mask = inputs["input_mask"].astype(bool)  # [batch, seq]
        records = []
        for row, (ids, real) in enumerate(zip(inputs["input_word_ids"], mask)):
            values = np.round(layers[row][:, real], _DECIMALS)  # [layers, tokens, hidden]
            record = {
                "linex_index": first_index + row,
                "features": [
                    {
                        "token": token,
                        "layers": [
                            {"index": index, "values": values[j, t].tolist()}
                            for j, index in enumerate(self.layers)
                        ],
                    }
                    for t, token in enumerate(self.tokenizer.convert_ids_to_tokens(ids[real]))
                ],
            }
            if self.pooling == "cls":
                record["pooled"] = np.round(cls[row], _DECIMALS).tolist()
            elif self.pooling == "mean":
                record["pooled"] = np.round(
                    layers[row][:, real].mean(axis=(0, 1)), _DECIMALS
                ).tolist()
            records.append(record)
        return records


def extract_features(
    extractor: FeatureExtractor,
    texts: list[tuple[str, str | None]],
    output_file: str,
    batch_size: int,
) -> int:
    """Runs `texts` (as `read_texts` returns them) through `extractor` in batches into JSON lines
    at `output_file` (written atomically). Returns the number of lines written; no text gives an
    empty output, as google-research/bert's `extract_features.py` does."""
    with (
        io_utils.atomic_output(output_file) as tmp,
        tf.io.gfile.GFile(tmp, "w") as out,
        tqdm(total=len(texts), unit="line", file=sys.stderr, desc="extract_features") as bar,
    ):
        out.write("")  # GFile creates the file on its first write
        for first in range(0, len(texts), batch_size):
            batch = texts[first : first + batch_size]
            for record in extractor.extract(batch, first_index=first):
                out.write(json.dumps(record) + "\n")
            bar.update(len(batch))
    return len(texts)


def _required_file(path: str, setting: str) -> str:
    """`path`, if it names a file; else `UserInputError` "`setting`=path: no such file" (or "a
    directory, not a file")."""
    try:
        return io_utils.require_file(path)
    except FileNotFoundError as e:
        raise UserInputError(f"`{setting}`={e}") from None


def run(options: FeatureExtractionOptions) -> int:
    """Checks the options, loads the model and writes `output_file`; returns the lines written.

    Raises `UserInputError`, one line naming the setting, for a missing input,
    vocab or config file (or a directory), an input that is not UTF-8 (naming `file:line`),
    an `output_file` that is one of those inputs or a file of the checkpoint (its config
    included), a directory or in no directory,
    a checkpoint that stores no config without `bert_config_file`, a bad `layers`
    value or a `max_seq_length` the model or a text pair (naming `file:line`) cannot take.
    """
    input_file = _required_file(options.input_file, "input_file")
    vocab_file = _required_file(options.vocab_file, "vocab_file")
    config_file = (
        _required_file(options.bert_config_file, "bert_config_file")
        if options.bert_config_file
        else None
    )
    corpus.check_output_directory(options.output_file)
    with named_setting("init_checkpoint"):
        checkpoint = resolve_starting_checkpoint(options.init_checkpoint)
    corpus.check_output_files(
        [options.output_file],
        [input_file],
        vocab_file=vocab_file,
        bert_config_file=config_file,
        init_checkpoint=files_of(checkpoint.format, checkpoint.location),
    )
    texts = read_texts(input_file)
    check_pairs_fit(texts, options.max_seq_length, input_file)
    config = resolve_bert_config(config_file, checkpoint)
    layers = parse_layers(options.layers, config.num_hidden_layers)
    config.check_seq_length(options.max_seq_length)
    tokenizer = BertTokenizer(vocab_file, options.do_lower_case)
    config.check_vocab_size(len(tokenizer.vocab), vocab_file)
    encoder = BertEncoder.from_bert_config(config)
    load_init_checkpoint(checkpoint, encoder)
    extractor = FeatureExtractor(
        encoder, tokenizer, layers, options.max_seq_length, options.pooling
    )
    count = extract_features(extractor, texts, options.output_file, options.batch_size)
    logging.info("Wrote %d lines to %s", count, options.output_file)
    return count
