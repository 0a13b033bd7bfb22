"""`BertConfig`: google-research/bert's `bert_config.json`, read, validated and written."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from absl import logging

from bert_tf import io_utils, text_files
from bert_tf.errors import UserInputError

CONFIG_FILE = "bert_config.json"  # a config's name beside a checkpoint or in an output directory
# The `hidden_act` values accepted, each with the activation it names (`layers.activations`).
# "gelu" is the exact erf form; "gelu_new" and "gelu_pytorch_tanh" are Hugging Face's names for
# the tanh approximation.
HIDDEN_ACTS = {
    "gelu": "gelu",
    "gelu_approximate": "gelu_approximate",
    "gelu_new": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
    "tanh": "tanh",
    "linear": "linear",
}


class ConfigError(UserInputError):
    """A `bert_config.json` that cannot be used, with the file and field named."""


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """The size and regularisation of a BERT encoder, in google-research/bert's names.

    The field names are the keys of a released `bert_config.json`, and they are
    also the constructor arguments of `bert_tf.BertEncoder`, so
    `BertEncoder(**config.encoder_kwargs())` builds the network. Keys that a
    config file carries beyond these (some released multilingual configs have
    `directionality` or `pooler_*`) are kept in `extra` and written back.

    Attributes:
        vocab_size, hidden_size: the WordPiece vocab's size and the hidden width.
        num_hidden_layers, num_attention_heads: the Transformer blocks and their heads.
        intermediate_size, hidden_act: the feed-forward width and activation (`HIDDEN_ACTS`).
        hidden_dropout_prob, attention_probs_dropout_prob: the dropout rates.
        max_position_embeddings, type_vocab_size: the position and segment tables' sizes.
        initializer_range: the standard deviation of the truncated-normal initializer.
        extra: the file's other keys.
        source: what errors name, such as the file read (constructor only).

    Raises:
        ConfigError: a field out of range, naming `source` and the field.

    Example:
    >>> config = BertConfig.from_json_file("bert_config.json")
    >>> config.hidden_size, config.num_hidden_layers
    (16, 1)
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 16
    initializer_range: float = 0.02
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    source: dataclasses.InitVar[str] = "bert_config"

    def __post_init__(self, source: str):
        self.validate(source)

    # -- validation -----------------------------------------------------------------

    def validate(self, source: str = "bert_config") -> None:
        """Checks every field's type and range, and that the heads divide `hidden_size`.

        Args:
            source: what the error names, such as the file read.

        Raises:
            ConfigError: naming `source` and the first bad field.
        """

        def fail(field: str, problem: str):
            raise ConfigError(f"{source}: field '{field}' {problem}")

        for field in (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "type_vocab_size",
        ):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                fail(field, f"must be a positive integer, got {value!r}")
        for field in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
                fail(field, f"must be a probability in [0, 1), got {value!r}")
        if (
            isinstance(self.initializer_range, bool)
            or not isinstance(self.initializer_range, (int, float))
            or self.initializer_range <= 0
        ):
            fail("initializer_range", f"must be a positive number, got {self.initializer_range!r}")
        if self.hidden_act not in HIDDEN_ACTS:
            fail("hidden_act", f"must be one of {', '.join(HIDDEN_ACTS)}; got {self.hidden_act!r}")
        if self.hidden_size % self.num_attention_heads:
            fail(
                "num_attention_heads",
                f"({self.num_attention_heads}) must divide hidden_size ({self.hidden_size})",
            )

    def check_seq_length(self, seq_length: int, setting: str = "max_seq_length") -> None:
        """Checks that the model can take `seq_length` tokens.

        Args:
            seq_length: the tokens per sequence asked for.
            setting: the setting that asked, for the error.

        Raises:
            ConfigError: naming `setting`, if `seq_length` exceeds `max_position_embeddings`.
        """
        if seq_length > self.max_position_embeddings:
            raise ConfigError(
                f"`{setting}`={seq_length} exceeds the model's "
                f"max_position_embeddings {self.max_position_embeddings}"
            )

    def check_vocab_size(self, num_tokens: int, vocab_file: str) -> None:
        """Checks that the model has an embedding for every id of `vocab_file`.

        Warns if it has fewer tokens than `vocab_size` (another model's vocab, unless the model
        pads its table).

        Args:
            num_tokens: the vocab's size.
            vocab_file: the vocab's file, for the message.

        Raises:
            ConfigError: `num_tokens` exceeds `vocab_size`.
        """
        if num_tokens > self.vocab_size:
            raise ConfigError(
                f"`vocab_file`={vocab_file} has {num_tokens} tokens, more than the "
                f"model's vocab_size {self.vocab_size}: is it the vocab the model "
                "was trained with?"
            )
        if num_tokens < self.vocab_size:
            logging.warning(
                "--vocab_file=%s has %d tokens, the model's vocab_size is %d: is it the vocab "
                "the model was trained with?",
                vocab_file,
                num_tokens,
                self.vocab_size,
            )

    # -- dict and JSON ---------------------------------------------------------------

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The bert_config.json keys this class has fields for.

        Returns:
            The field names, in declaration order, without `extra`.
        """
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "bert_config") -> "BertConfig":
        """Builds a config from bert_config.json keys; unknown keys go to `extra`.

        Args:
            values: the keys and values, as read from the JSON object.
            source: what errors name, such as the file read.

        Returns:
            The config.

        Raises:
            ConfigError: `values` is not a dict, lacks `vocab_size` or has a bad field.
        """
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: must be a JSON object, got {type(values).__name__}")
        if "vocab_size" not in values:
            raise ConfigError(f"{source}: field 'vocab_size' is missing")
        known = {k: v for k, v in values.items() if k in cls.field_names()}
        extra = {k: v for k, v in values.items() if k not in cls.field_names()}
        return cls(**known, extra=extra, source=source)

    @classmethod
    def from_json_file(cls, path: str | os.PathLike) -> "BertConfig":
        """Reads a google-research/bert `bert_config.json`.

        Args:
            path: the file.

        Returns:
            The config; its errors name `path`.

        Raises:
            ConfigError: the file is unreadable, not JSON, or has a bad field.
        """
        path = os.fspath(path)
        return cls.from_dict(
            text_files.read_json(path, ConfigError, what="config file"), source=path
        )

    def to_dict(self) -> dict[str, Any]:
        """The config as a dict.

        Returns:
            The bert_config.json keys and values, `extra` included.
        """
        values = {name: getattr(self, name) for name in self.field_names()}
        values.update(self.extra)
        return values

    def to_json_string(self) -> str:
        """The config as JSON.

        Returns:
            The bert_config.json text: indented, keys sorted, `extra` included.
        """
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path: str | os.PathLike) -> None:
        """Writes the config atomically (temporary name, then rename).

        Args:
            path: the `bert_config.json` to write.
        """
        io_utils.atomic_write_text(path, self.to_json_string())

    def encoder_kwargs(self) -> dict[str, Any]:
        """The arguments of `bert_tf.BertEncoder` for this config.

        Returns:
            Every field by name, `extra` included.
        """
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
