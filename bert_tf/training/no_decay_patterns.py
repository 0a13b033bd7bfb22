"""`KeepsNoDecayPatterns`: an optimizer whose weight-decay exclusions survive `get_config`."""

from __future__ import annotations


class KeepsNoDecayPatterns:
    """Mixin for a Keras optimizer: the `var_names` patterns of `exclude_from_weight_decay` are its
    `no_decay_patterns` argument and in its `get_config`,
    so `from_config` spares the same variables.

    (Keras's optimizers drop them from their config; `var_list`'s variables cannot be serialised.)
    """

    def __init__(self, *args, no_decay_patterns=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.no_decay_patterns = []
        if no_decay_patterns:
            self.exclude_from_weight_decay(var_names=no_decay_patterns)

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        super().exclude_from_weight_decay(var_list, var_names)
        if var_names:  # as Keras, which keeps its patterns when called with variables only
            self.no_decay_patterns = list(var_names)

    def get_config(self):
        return {**super().get_config(), "no_decay_patterns": self.no_decay_patterns}
